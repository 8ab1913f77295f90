# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_ksm_global_optspecs
    string join \n color= v/v= kubeconfig= context= n/namespace= request-timeout= as= as-group= h/help V/version
end

function __fish_kubectl_ksm_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_ksm_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_ksm_using_subcommand
    set -l cmd (__fish_kubectl_ksm_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "lint" -d 'Lint StateManagementProvider, ServiceSet, ServiceTemplate, ClusterDeployment and MultiClusterService manifests'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "eval" -d 'Evaluate a readiness rule against saved objects, with an explanation'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "check" -d 'Check a StateManagementProvider against saved objects: the conditions kcm would set'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "render" -d 'Render the objects a ServiceSet\'s adapter creates: Sveltos Profile/ClusterProfile (kcm\'s default provider) or Flux HelmRelease/Kustomization'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "diff" -d 'Compare the rendered objects with the live ones: exit 1 on drift, as `flux diff`'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "doctor" -d 'Diagnose stuck or failed services: SMP → ServiceSet → Profile or Flux object → source'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "tree" -d 'The fleet as a tree: MultiClusterServices and the clusters they match, each cluster\'s ServiceSets and their services'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "trace" -d 'Who deployed a release or Flux object, from which template, and why it is in its state: provider object → ServiceSet → ClusterDeployment or MultiClusterService → ServiceTemplate'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "wait" -d 'Wait until every service of a ClusterDeployment, MultiClusterService or ServiceSet is deployed: exit 0, 1 on a failure that will not heal, 3 on timeout'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "run" -d 'Run the Flux adapter controller: ServiceSets in, HelmReleases and Kustomizations out'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "mcp" -d 'Serve the Model Context Protocol on stdio: the verbs as read-only tools for assistants'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "version" -d 'Print the version, git commit and build date'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish, powershell)'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "generate" -d 'Write shell completions and man pages (for packagers and the repository)'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_needs_command" -f -a "__complete" -d 'Completion protocol used by the kubectl_complete-ksm script'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -l config -d 'The lint configuration (default: the nearest .kubectl-ksm.yaml from the current directory up): excluded paths, disabled codes, the placeholders\' severity' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -l placeholders -d 'Template placeholders (`${VAR}`, `$VAR`, `<name>`, KSM402): report them as errors, as warnings, or not at all (a repository of templates) [default: warning, or the configuration\'s lint.placeholders]' -r -f -a "error\t''
warning\t''
ignore\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -l explain -d 'Print the documentation of a code (lint, render or doctor: KSM204, KSM609, or its name)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -s o -l output -d 'Output format' -r -f -a "human\t'For people: colours, source excerpts, tables'
json\t'A versioned JSON report'
sarif\t'SARIF 2.1.0 (code scanning)'
github\t'GitHub Actions workflow annotations'"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -s j -l jobs -d 'Files linted at once (default: the CPUs this process may use); the report is the same whatever the number, in input order' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -l strict -d 'Fail (exit 1) on warnings too'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -l list-rules -d 'List every check with its code and title'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand lint" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l rule-file -d 'Read the rule from a file (`-` for stdin)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l from -d 'Read KIND/NAME from saved objects instead of the cluster: files or directories of `kubectl get ... -o yaml` output or `doctor --save` bundles' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -s f -l filename -d 'Objects to evaluate against: YAML or JSON, multi-document, `kind: List`, or `-` for stdin' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l env -d 'kcm\'s CEL environment: `readiness` (StateManagementProvider rules: `self`, programs built with OptOptimize) or `health` (the Sveltos adapter\'s health rules: `obj`, the string extension, programs built without options)' -r -f -a "readiness\t'StateManagementProvider readiness rules'
health\t'Service health rules (the Sveltos adapter\'s verifier)'"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l message -d 'With --env health: the rule\'s `message` expression, shown for each unhealthy object (empty when it fails or is not a string, as kcm\'s verifier does)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l cost-limit -d 'Cost budget of one evaluation (CEL cost units; the default bounds an evaluation well under 1 s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l memory-limit -d 'Memory budget of one evaluation (bytes the values it builds may take in all)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -s o -l output -d 'Output format' -r -f -a "human\t'For people: colours, source excerpts, tables'
json\t'A versioned JSON report'"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand eval" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -s l -l selector -d 'Only the StateManagementProviders whose labels match (kubectl\'s syntax: a=b,c!=d)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -l objects -d 'Files or directories with the referenced objects and CRDs (`kubectl get -o yaml` output)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -l from -d 'Read the SMPs (named as live) and what they reference from saved objects instead of the cluster: files or directories of `kubectl get ... -o yaml` output or `doctor --save` bundles' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -l cost-limit -d 'Cost budget of one evaluation (CEL cost units; the default bounds an evaluation well under 1 s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -l memory-limit -d 'Memory budget of one evaluation (bytes the values it builds may take in all)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -s o -l output -d 'Output format' -r -f -a "human\t'For people: colours, source excerpts, tables'
json\t'A versioned JSON report'"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand check" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l from -d 'Read the ServiceSet (by name, as with --live; none: every ServiceSet, of the namespace when -n is given) and what its render reads from saved objects: files or directories of `kubectl get ... -o yaml` output or `doctor --save` bundles' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -s l -l selector -d 'With --live or --from and no name, only the ServiceSets whose labels match (a=b,c!=d)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l templates -d 'Files or directories with ServiceTemplates (`kubectl get servicetemplates -o yaml`)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l smp -d 'Files with StateManagementProviders, whose selectors give a derived ServiceSet its labels' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l system-namespace -d 'kcm\'s system namespace (self-management ServiceSets of a MultiClusterService live there)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l explain -d 'Print the documentation of a finding code (e.g. KSM505) and exit' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -s o -l output -d 'Output format: a multi-document YAML stream, or a JSON List' -r -f -a "yaml\t'YAML'
json\t'A versioned JSON report'"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -l live -d 'Read the ServiceSet and its ServiceTemplates from the cluster'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand render" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -s l -l selector -d 'With --live and no name, only the ServiceSets whose labels match (a=b,c!=d)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -l templates -d 'Files or directories with ServiceTemplates' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -l smp -d 'Files with StateManagementProviders, whose selectors give a derived ServiceSet its labels' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -l system-namespace -d 'kcm\'s system namespace (self-management ServiceSets of a MultiClusterService live there)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -s o -l output -d 'Output format' -r -f -a "human\t'For people: colours, source excerpts, tables'
json\t'A versioned JSON report'"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -l live -d 'Render the ServiceSets of the cluster (with their ServiceTemplates) instead of a file'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand diff" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l from -d 'Diagnose saved objects instead of the cluster: files or directories of `kubectl get ... -o yaml` output (Lists or single objects)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l serviceset -d 'Only this ServiceSet' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -s l -l selector -d 'Only the ServiceSets whose labels match (kubectl\'s syntax: a=b,c!=d)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l stuck-after -d 'A service Pending or Provisioning longer than this is stuck (Go duration)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l now -d 'The time to judge ages against (RFC 3339); default: now, or for a bundle saved with --save the time it was captured' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l save -d 'Write the objects used as a support bundle (a YAML stream of the objects\' JSON; Secret data removed; the capture time recorded for --from): one file, or with a directory (an existing one, or a path ending in /) files of at most 16 MiB in it, for a fleet larger than one file may be' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l explain -d 'Print the documentation of a finding code (e.g. KSM609) and exit' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -s o -l output -d 'Output format' -r -f -a "human\t'For people: colours, source excerpts, tables'
json\t'A versioned JSON report'
yaml\t'YAML'
sarif\t'SARIF 2.1.0 (code scanning)'
github\t'GitHub Actions workflow annotations'
html\t'One self-contained HTML page (no external assets; opens offline)'"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -s A -l all-namespaces -d 'ServiceSets of every namespace (the default for a dump; live, the default is the context\'s namespace, as with kubectl; -n chooses another; -A wins over -n, as kubectl\'s)'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -s w -l watch -d 'Stay on the chains and print each change as it happens (a service\'s state, what the provider\'s objects say, the first failing link) with the Events kcm, Sveltos and Flux record about their objects, in one timeline, oldest first (live only; Ctrl-C ends it)'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -l until-healthy -d 'With --watch: end (exit 0) once everything is healthy (no error or warning, every service Deployed)'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -l from -d 'Read saved objects instead of the cluster: files or directories of `kubectl get ... -o yaml` output or `doctor --save` bundles' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -l now -d 'The time to judge ages against (RFC 3339); default: now, or for a bundle saved with doctor --save the time it was captured' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -s o -l output -d 'Output format' -r -f -a "human\t'For people: colours, source excerpts, tables'
json\t'A versioned JSON report'
yaml\t'YAML'"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -s A -l all-namespaces -d 'Every namespace (the default for a dump; live, the default is the context\'s namespace, as with kubectl)'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand tree" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -l release -d 'Only the service deployed as this release: [NAMESPACE/]NAME, a Helm release\'s namespace and name on the cluster (for Kustomize and Resources services, the service\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -l cluster -d 'Only services deployed to this cluster: a ClusterDeployment ([NAMESPACE/]NAME), or `management` for self-management' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -l from -d 'Read saved objects instead of the cluster: files or directories of `kubectl get ... -o yaml` output or `doctor --save` bundles' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -l now -d 'The time to judge ages against (RFC 3339); default: now, or for a bundle saved with doctor --save the time it was captured' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -s o -l output -d 'Output format' -r -f -a "human\t'For people: colours, source excerpts, tables'
json\t'A versioned JSON report'
yaml\t'YAML'"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -s A -l all-namespaces -d 'Every namespace (the default for a dump; live, the default is the context\'s namespace, as with kubectl)'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand trace" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -l for -d 'The condition: `deployed`, every service Deployed' -r -f -a "deployed\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -l timeout -d 'How long to wait at most (Go duration: 90s, 10m, 1h)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -l from -d 'Read saved objects instead of the cluster: files or directories of `kubectl get ... -o yaml` output or `doctor --save` bundles' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -l now -d 'The time to judge ages against (RFC 3339); default: now, or for a bundle saved with doctor --save the time it was captured' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -s A -l all-namespaces -d 'Every namespace (the default for a dump; live, the default is the context\'s namespace, as with kubectl)'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -s h -l help -d 'Print help'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand wait" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l provider -d 'The StateManagementProvider this adapter serves' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l leader-election-namespace -d 'Namespace of the Lease (default: POD_NAMESPACE, then the context\'s namespace)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l leader-election-id -d 'Name of the Lease (default: kubectl-ksm-<provider>)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l bind-address -d 'Address of /metrics, /healthz and /readyz' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l source-timeout -d 'How long a service may wait on a failing source (or a transient error) before it counts as Failed' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l resync -d 'Reconcile every ServiceSet at least this often, changes or not (0: only on changes)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l min-retry-delay -d 'The first retry of a ServiceSet whose reconcile failed; each further failure doubles it' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l max-retry-delay -d 'The longest wait between two retries of a failing ServiceSet' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l concurrency -d 'ServiceSets reconciled at the same time' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l watch-label-selector -d 'Reconcile only the ServiceSets whose labels match (a shard, e.g. \'sharding.fluxcd.io/key in (shard1)\'; the replica for the rest: \'!sharding.fluxcd.io/key\'). The default Lease name then carries a hash of the selector: one leader per shard' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l log-format -d 'Log format' -r -f -a "json\t''
text\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l watch-timeout -d 'How long each watch request lasts (its timeoutSeconds, whole seconds): the API server ends it then, and the adapter opens it again from the version it reached, without listing again. Lower it where a proxy between the adapter and the API server cuts longer requests' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -l leader-elect -d 'Run only while holding a coordination.k8s.io Lease (for more than one replica)'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -s h -l help -d 'Print help'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand run" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -l from -d 'Answer from saved objects instead of the cluster: files or directories of `kubectl get ... -o yaml` output or `doctor --save` bundles' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -l call-timeout -d 'How long one tool call may take before it is answered with a timeout error (0: no limit)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -l now -d 'The time doctor, tree and trace judge ages against (RFC 3339); default: now, or for a bundle saved with doctor --save the time it was captured' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -s h -l help -d 'Print help'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand mcp" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand version" -s o -l output -d 'Output format' -r -f -a "human\t'For people: colours, source excerpts, tables'
json\t'A versioned JSON report'
yaml\t'YAML'"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand version" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand version" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand version" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand version" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand version" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand version" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand version" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand version" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand version" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand version" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand completion" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand completion" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand completion" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand completion" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand completion" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand completion" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand completion" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand completion" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand completion" -s h -l help -d 'Print help'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand completion" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand generate" -l out -d 'Directory that receives completions/ and man/' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand generate" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand generate" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand generate" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand generate" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand generate" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand generate" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand generate" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand generate" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand generate" -s h -l help -d 'Print help'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand generate" -s V -l version -d 'Print version'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand __complete" -l color -d 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand __complete" -s v -l v -d 'Log level, as kubectl\'s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand __complete" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)' -r -F
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand __complete" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand __complete" -s n -l namespace -d 'The namespace (default: the context\'s)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand __complete" -l request-timeout -d 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server\'s own limit for a get or a list]' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand __complete" -l as -d 'User to impersonate for the requests (e.g. the SMP\'s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand __complete" -l as-group -d 'Group to impersonate (repeat for several); needs --as' -r
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand __complete" -s h -l help -d 'Print help'
complete -c kubectl-ksm -n "__fish_kubectl_ksm_using_subcommand __complete" -s V -l version -d 'Print version'
