// Command schemas writes the JSON schemas kubeconform reads for the CRDs the project embeds,
// as kubeconform's openapi2jsonschema.py writes them in strict mode: each served version's
// openAPIV3Schema, objects with properties closed to unknown fields (unless they preserve
// them), x-kubernetes-int-or-string as a string or an integer.
//
//	schemas OUT CRD.yaml...
//
// writes OUT/<group>/<kind>_<version>.json (kind in lower case), the layout of
// -schema-location 'OUT/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json'.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

type crd struct {
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
			Schema struct {
				OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

func strict(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = strict(x)
		}
		if t["x-kubernetes-int-or-string"] == true {
			delete(t, "type")
			t["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}
		}
		_, props := t["properties"]
		_, extra := t["additionalProperties"]
		if props && !extra && t["x-kubernetes-preserve-unknown-fields"] != true {
			t["additionalProperties"] = false
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = strict(x)
		}
	}
	return v
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: schemas OUT CRD.yaml...")
		os.Exit(2)
	}
	out := os.Args[1]
	written := 0
	for _, path := range os.Args[2:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			var c crd
			if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
				os.Exit(1)
			}
			if c.Spec.Names.Kind == "" {
				continue
			}
			for _, v := range c.Spec.Versions {
				if !v.Served || v.Schema.OpenAPIV3Schema == nil {
					continue
				}
				dir := filepath.Join(out, c.Spec.Group)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				text, err := json.Marshal(strict(v.Schema.OpenAPIV3Schema))
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				file := filepath.Join(dir, strings.ToLower(c.Spec.Names.Kind)+"_"+v.Name+".json")
				if err := os.WriteFile(file, text, 0o644); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				written++
			}
		}
	}
	fmt.Printf("%d schemas in %s\n", written, out)
}
