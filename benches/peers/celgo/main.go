// Command celgo times cel-go set up as kcm sets it up, for benches/peers/run.py.
//
//	celgo -env readiness|health -mode compile|eval|kcm -rule TEXT -object FILE.json -n N
//
// prints one JSON line: {"ns_per_op": ..., "result": "..."}.
//
// Environments (k0rdent/kcm, cel-go v0.31.0): readiness is `self` of type map(string, dyn),
// the standard library only, programs built with cel.EvalOptions(cel.OptOptimize); health is
// `obj` of type dyn with ext.Strings(), programs built without options.
//
// Modes: compile is env.Compile + env.Program (the environment made once); eval is
// prg.Eval of a compiled program on the decoded object; kcm is the controller's own path
// for one object: for readiness a fresh environment, Compile, Program and Eval on every call
// (evaluateReadiness), for health Eval of the cached program (the verifier caches programs
// per ConfigMap resourceVersion).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

func newEnv(kind string) (*cel.Env, []cel.ProgramOption, string) {
	switch kind {
	case "readiness":
		env, err := cel.NewEnv(cel.Variable("self", cel.MapType(cel.StringType, cel.DynType)))
		check(err)
		return env, []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}, "self"
	case "health":
		env, err := cel.NewEnv(cel.Variable("obj", cel.DynType), ext.Strings())
		check(err)
		return env, nil, "obj"
	}
	panic("unknown environment " + kind)
}

func program(env *cel.Env, opts []cel.ProgramOption, rule string) cel.Program {
	prg, _ := compile(env, opts, rule)
	return prg
}

// compile is env.Compile and env.Program; it also returns the rule's result type.
func compile(env *cel.Env, opts []cel.ProgramOption, rule string) (cel.Program, string) {
	ast, iss := env.Compile(rule)
	if iss.Err() != nil {
		check(iss.Err())
	}
	prg, err := env.Program(ast, opts...)
	check(err)
	return prg, ast.OutputType().String()
}

// decode reads JSON as Kubernetes decodes unstructured objects: a number that fits int64 is
// an int64, every other number a float64.
func decode(data []byte) map[string]any {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v map[string]any
	check(d.Decode(&v))
	return convert(v).(map[string]any)
}

func convert(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = convert(x)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = convert(x)
		}
		return t
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, err := t.Float64()
		check(err)
		return f
	}
	return v
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

var sink any

func main() {
	envKind := flag.String("env", "readiness", "readiness or health")
	mode := flag.String("mode", "eval", "compile, eval or kcm")
	rule := flag.String("rule", "", "the rule text")
	objectFile := flag.String("object", "", "the object, JSON")
	n := flag.Int("n", 10000, "iterations")
	flag.Parse()

	data, err := os.ReadFile(*objectFile)
	check(err)
	obj := decode(data)
	env, opts, variable := newEnv(*envKind)
	vars := map[string]any{variable: obj}

	var op func() any
	switch *mode {
	case "compile":
		op = func() any {
			_, resultType := compile(env, opts, *rule)
			return resultType
		}
	case "eval":
		prg := program(env, opts, *rule)
		op = func() any {
			out, _, err := prg.Eval(vars)
			check(err)
			return out
		}
	case "kcm":
		if *envKind == "readiness" {
			op = func() any {
				env, opts, _ := newEnv(*envKind)
				out, _, err := program(env, opts, *rule).Eval(vars)
				check(err)
				return out
			}
		} else {
			prg := program(env, opts, *rule)
			op = func() any {
				out, _, err := prg.Eval(vars)
				check(err)
				return out
			}
		}
	default:
		panic("unknown mode " + *mode)
	}
	// The result, then the timed loop.
	result := op()
	start := time.Now()
	for i := 0; i < *n; i++ {
		sink = op()
	}
	elapsed := time.Since(start)
	line, _ := json.Marshal(map[string]any{
		"ns_per_op": float64(elapsed.Nanoseconds()) / float64(*n),
		"result":    fmt.Sprint(result),
	})
	fmt.Println(string(line))
}
