
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-ksm' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-ksm'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-ksm' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('lint', 'lint', [CompletionResultType]::ParameterValue, 'Lint StateManagementProvider, ServiceSet, ServiceTemplate, ClusterDeployment and MultiClusterService manifests')
            [CompletionResult]::new('eval', 'eval', [CompletionResultType]::ParameterValue, 'Evaluate a readiness rule against saved objects, with an explanation')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check a StateManagementProvider against saved objects: the conditions kcm would set')
            [CompletionResult]::new('render', 'render', [CompletionResultType]::ParameterValue, 'Render the objects a ServiceSet''s adapter creates: Sveltos Profile/ClusterProfile (kcm''s default provider) or Flux HelmRelease/Kustomization')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Compare the rendered objects with the live ones: exit 1 on drift, as `flux diff`')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Diagnose stuck or failed services: SMP → ServiceSet → Profile or Flux object → source')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run the Flux adapter controller: ServiceSets in, HelmReleases and Kustomizations out')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version, git commit and build date')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, powershell)')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Write shell completions and man pages (for packagers and the repository)')
            [CompletionResult]::new('__complete', '__complete', [CompletionResultType]::ParameterValue, 'Completion protocol used by the kubectl_complete-ksm script')
            break
        }
        'kubectl-ksm;lint' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'The lint configuration (default: the nearest .kubectl-ksm.yaml from the current directory up): excluded paths, disabled codes, the placeholders'' severity')
            [CompletionResult]::new('--placeholders', '--placeholders', [CompletionResultType]::ParameterName, 'Template placeholders (`${VAR}`, `$VAR`, `<name>`, KSM402): report them as errors, as warnings, or not at all (a repository of templates) [default: warning, or the configuration''s lint.placeholders]')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Print the documentation of a code (lint, render or doctor: KSM204, KSM609, or its name)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Files linted at once (default: the CPUs this process may use); the report is the same whatever the number, in input order')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Files linted at once (default: the CPUs this process may use); the report is the same whatever the number, in input order')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Fail (exit 1) on warnings too')
            [CompletionResult]::new('--list-rules', '--list-rules', [CompletionResultType]::ParameterName, 'List every check with its code and title')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-ksm;eval' {
            [CompletionResult]::new('--rule-file', '--rule-file', [CompletionResultType]::ParameterName, 'Read the rule from a file (`-` for stdin)')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Objects to evaluate against: YAML or JSON, multi-document, `kind: List`, or `-` for stdin')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Objects to evaluate against: YAML or JSON, multi-document, `kind: List`, or `-` for stdin')
            [CompletionResult]::new('--env', '--env', [CompletionResultType]::ParameterName, 'kcm''s CEL environment: `readiness` (StateManagementProvider rules: `self`, programs built with OptOptimize) or `health` (the Sveltos adapter''s health rules: `obj`, the string extension, programs built without options)')
            [CompletionResult]::new('--message', '--message', [CompletionResultType]::ParameterName, 'With --env health: the rule''s `message` expression, shown for each unhealthy object (empty when it fails or is not a string, as kcm''s verifier does)')
            [CompletionResult]::new('--cost-limit', '--cost-limit', [CompletionResultType]::ParameterName, 'Cost budget of one evaluation (CEL cost units; the default bounds an evaluation well under 1 s)')
            [CompletionResult]::new('--memory-limit', '--memory-limit', [CompletionResultType]::ParameterName, 'Memory budget of one evaluation (bytes the values it builds may take in all)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-ksm;check' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only the StateManagementProviders whose labels match (kubectl''s syntax: a=b,c!=d)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only the StateManagementProviders whose labels match (kubectl''s syntax: a=b,c!=d)')
            [CompletionResult]::new('--objects', '--objects', [CompletionResultType]::ParameterName, 'Files or directories with the referenced objects and CRDs (`kubectl get -o yaml` output)')
            [CompletionResult]::new('--cost-limit', '--cost-limit', [CompletionResultType]::ParameterName, 'Cost budget of one evaluation (CEL cost units; the default bounds an evaluation well under 1 s)')
            [CompletionResult]::new('--memory-limit', '--memory-limit', [CompletionResultType]::ParameterName, 'Memory budget of one evaluation (bytes the values it builds may take in all)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-ksm;render' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'With --live and no name, only the ServiceSets whose labels match (a=b,c!=d)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'With --live and no name, only the ServiceSets whose labels match (a=b,c!=d)')
            [CompletionResult]::new('--templates', '--templates', [CompletionResultType]::ParameterName, 'Files or directories with ServiceTemplates (`kubectl get servicetemplates -o yaml`)')
            [CompletionResult]::new('--smp', '--smp', [CompletionResultType]::ParameterName, 'Files with StateManagementProviders, whose selectors give a derived ServiceSet its labels')
            [CompletionResult]::new('--system-namespace', '--system-namespace', [CompletionResultType]::ParameterName, 'kcm''s system namespace (self-management ServiceSets of a MultiClusterService live there)')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Print the documentation of a finding code (e.g. KSM505) and exit')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: a multi-document YAML stream, or a JSON List')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: a multi-document YAML stream, or a JSON List')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('--live', '--live', [CompletionResultType]::ParameterName, 'Read the ServiceSet and its ServiceTemplates from the cluster')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-ksm;diff' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'With --live and no name, only the ServiceSets whose labels match (a=b,c!=d)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'With --live and no name, only the ServiceSets whose labels match (a=b,c!=d)')
            [CompletionResult]::new('--templates', '--templates', [CompletionResultType]::ParameterName, 'Files or directories with ServiceTemplates')
            [CompletionResult]::new('--smp', '--smp', [CompletionResultType]::ParameterName, 'Files with StateManagementProviders, whose selectors give a derived ServiceSet its labels')
            [CompletionResult]::new('--system-namespace', '--system-namespace', [CompletionResultType]::ParameterName, 'kcm''s system namespace (self-management ServiceSets of a MultiClusterService live there)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('--live', '--live', [CompletionResultType]::ParameterName, 'Render the ServiceSets of the cluster (with their ServiceTemplates) instead of a file')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-ksm;doctor' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Diagnose saved objects instead of the cluster: files or directories of `kubectl get ... -o yaml` output (Lists or single objects)')
            [CompletionResult]::new('--serviceset', '--serviceset', [CompletionResultType]::ParameterName, 'Only this ServiceSet')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only the ServiceSets whose labels match (kubectl''s syntax: a=b,c!=d)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only the ServiceSets whose labels match (kubectl''s syntax: a=b,c!=d)')
            [CompletionResult]::new('--stuck-after', '--stuck-after', [CompletionResultType]::ParameterName, 'A service Pending or Provisioning longer than this is stuck (Go duration)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The time to judge ages against (RFC 3339); default: now, or for a bundle saved with --save the time it was captured')
            [CompletionResult]::new('--save', '--save', [CompletionResultType]::ParameterName, 'Write the objects used as a support bundle (YAML; Secret data removed; the capture time recorded for --from)')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Print the documentation of a finding code (e.g. KSM609) and exit')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'ServiceSets of every namespace (the default for a dump; live, the default is the context''s namespace, as with kubectl; -n chooses another; -A wins over -n, as kubectl''s)')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'ServiceSets of every namespace (the default for a dump; live, the default is the context''s namespace, as with kubectl; -n chooses another; -A wins over -n, as kubectl''s)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-ksm;run' {
            [CompletionResult]::new('--provider', '--provider', [CompletionResultType]::ParameterName, 'The StateManagementProvider this adapter serves')
            [CompletionResult]::new('--leader-election-namespace', '--leader-election-namespace', [CompletionResultType]::ParameterName, 'Namespace of the Lease (default: POD_NAMESPACE, then the context''s namespace)')
            [CompletionResult]::new('--leader-election-id', '--leader-election-id', [CompletionResultType]::ParameterName, 'Name of the Lease (default: kubectl-ksm-<provider>)')
            [CompletionResult]::new('--bind-address', '--bind-address', [CompletionResultType]::ParameterName, 'Address of /metrics, /healthz and /readyz')
            [CompletionResult]::new('--source-timeout', '--source-timeout', [CompletionResultType]::ParameterName, 'How long a service may wait on a failing source (or a transient error) before it counts as Failed')
            [CompletionResult]::new('--resync', '--resync', [CompletionResultType]::ParameterName, 'Reconcile every ServiceSet at least this often, changes or not (0: only on changes)')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'ServiceSets reconciled at the same time')
            [CompletionResult]::new('--watch-label-selector', '--watch-label-selector', [CompletionResultType]::ParameterName, 'Reconcile only the ServiceSets whose labels match (a shard, e.g. ''sharding.fluxcd.io/key in (shard1)''; the replica for the rest: ''!sharding.fluxcd.io/key''). The default Lease name then carries a hash of the selector: one leader per shard')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('--leader-elect', '--leader-elect', [CompletionResultType]::ParameterName, 'Run only while holding a coordination.k8s.io Lease (for more than one replica)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-ksm;version' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-ksm;completion' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-ksm;generate' {
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Directory that receives completions/ and man/')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-ksm;__complete' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log level, as kubectl''s -v: 1 more detail (per-file counts, explanations of true results), 4 debug logs, 6 every HTTP request, 7 with its headers')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then ~/.kube/config, then the in-cluster service account)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever [default: 60s, the API server''s own limit for a get or a list]')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'User to impersonate for the requests (e.g. the SMP''s service account, system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeat for several); needs --as')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
