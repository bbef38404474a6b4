package charttest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// refusal is a value set the chart must refuse, and what the error must say: the
// schema's messages name the value's path, the templates' `fail`s name the value and why.
type refusal struct {
	name   string
	values map[string]any
	// want are substrings of the error, all of them.
	want []string
}

// schemaError starts every message of a value the schema refuses.
const schemaError = "values don't meet the specifications of the schema"

func refusals() []refusal {
	rows := []refusal{
		// What the binaries refuse to start without (backend/main.go and
		// fleet/controller.go validate; the schema's required flags are generated from
		// them). A required flag both binaries have may be set in the shared config or in
		// the component's.
		{
			name:   "no cosmos-endpoint",
			values: map[string]any{"config": map[string]any{"cosmos-endpoint": ""}},
			want:   []string{schemaError, "at '/config/cosmos-endpoint': minLength: got 0, want 1", "at '/backend/config': missing property 'cosmos-endpoint'", "at '/fleet/config': missing property 'cosmos-endpoint'"},
		},
		{
			name:   "no clusters-service-url",
			values: map[string]any{"config": map[string]any{"clusters-service-url": nil}},
			want:   []string{schemaError, "at '/config': missing property 'clusters-service-url'", "at '/backend/config': missing property 'clusters-service-url'"},
		},
		{
			name: "cosmos-endpoint set for the backend only",
			values: map[string]any{
				"config":  map[string]any{"cosmos-endpoint": ""},
				"backend": map[string]any{"config": map[string]any{"cosmos-endpoint": "https://x.documents.azure.com:443/"}},
			},
			want: []string{schemaError, "at '/fleet/config': missing property 'cosmos-endpoint'"},
		},
		{
			name:   "no fleet region",
			values: map[string]any{"fleet": map[string]any{"config": map[string]any{"region": ""}}},
			want:   []string{schemaError, "at '/fleet/config/region': minLength: got 0, want 1"},
		},
		// The workload identities the pods authenticate to Cosmos DB (and ARM) with.
		{
			name:   "no backend client ID",
			values: map[string]any{"backend": map[string]any{"serviceAccount": map[string]any{"clientID": ""}}},
			want:   []string{schemaError, "at '/backend/serviceAccount/clientID': minLength: got 0, want 1"},
		},
		{
			name:   "no fleet client ID",
			values: map[string]any{"fleet": map[string]any{"serviceAccount": map[string]any{"clientID": ""}}},
			want:   []string{schemaError, "at '/fleet/serviceAccount/clientID': minLength: got 0, want 1"},
		},
		{
			name:   "client ID not a GUID",
			values: map[string]any{"fleet": map[string]any{"serviceAccount": map[string]any{"clientID": "hcpsched-fleet"}}},
			want:   []string{schemaError, "at '/fleet/serviceAccount/clientID': 'hcpsched-fleet' does not match pattern"},
		},
		// Flag keys: only the component's real flags; the shared config takes the flags
		// both binaries have.
		{
			name:   "misspelt backend flag",
			values: map[string]any{"backend": map[string]any{"config": map[string]any{"placement-requeue-afer": "1m"}}},
			want:   []string{schemaError, "at '/backend/config': additional properties 'placement-requeue-afer' not allowed"},
		},
		{
			name:   "misspelt shared flag",
			values: map[string]any{"config": map[string]any{"cosmos-endpiont": "https://x.documents.azure.com:443/"}},
			want:   []string{schemaError, "at '/config': additional properties 'cosmos-endpiont' not allowed"},
		},
		{
			name:   "misspelt fleet flag",
			values: map[string]any{"fleet": map[string]any{"config": map[string]any{"capacity-pol-interval": "30s"}}},
			want:   []string{schemaError, "at '/fleet/config': additional properties 'capacity-pol-interval' not allowed"},
		},
		{
			name:   "backend-only flag in the shared config",
			values: map[string]any{"config": map[string]any{"placement-requeue-after": "1m"}},
			want:   []string{schemaError, "at '/config': additional properties 'placement-requeue-after' not allowed"},
		},
		{
			name:   "fleet flag in the backend config",
			values: map[string]any{"backend": map[string]any{"config": map[string]any{"region": "uksouth"}}},
			want:   []string{schemaError, "at '/backend/config': additional properties 'region' not allowed"},
		},
		{
			name:   "fleet register flag in the fleet config",
			values: map[string]any{"fleet": map[string]any{"config": map[string]any{"aks-resource-id": "/subscriptions/x"}}},
			want:   []string{schemaError, "at '/fleet/config': additional properties 'aks-resource-id' not allowed"},
		},
		// Flag values of the wrong type for the flag.
		{
			name:   "duration without a unit",
			values: map[string]any{"backend": map[string]any{"config": map[string]any{"placement-requeue-after": "90"}}},
			want:   []string{schemaError, "at '/backend/config/placement-requeue-after': '90' does not match pattern"},
		},
		{
			name:   "duration as a number",
			values: map[string]any{"fleet": map[string]any{"config": map[string]any{"resync-period": 300}}},
			want:   []string{schemaError, "at '/fleet/config/resync-period': got number, want"},
		},
		{
			name:   "int not a number",
			values: map[string]any{"backend": map[string]any{"config": map[string]any{"placement-workers": "many"}}},
			want:   []string{schemaError, "at '/backend/config/placement-workers': 'many' does not match pattern"},
		},
		{
			name:   "bool not a bool",
			values: map[string]any{"config": map[string]any{"leader-elect": "yes"}},
			want:   []string{schemaError, "at '/config/leader-elect': 'yes' does not match pattern"},
		},
		{
			name:   "float not a number",
			values: map[string]any{"backend": map[string]any{"config": map[string]any{"placement-tolerance": "twelve"}}},
			want:   []string{schemaError, "at '/backend/config/placement-tolerance': 'twelve' does not match pattern"},
		},
		{
			name:   "nested flag value",
			values: map[string]any{"backend": map[string]any{"config": map[string]any{"placement-workers": map[string]any{"n": 1}}}},
			want:   []string{schemaError, "at '/backend/config/placement-workers': got object, want"},
		},
		// Monitoring.
		{
			name:   "unknown ServiceMonitor API group",
			values: map[string]any{"serviceMonitor": map[string]any{"apiGroup": "monitoring.example.com"}},
			want:   []string{schemaError, "at '/serviceMonitor/apiGroup': value must be one of 'monitoring.coreos.com', 'azmonitoring.coreos.com'"},
		},
		{
			name:   "alerts without a runbook location",
			values: map[string]any{"alerts": map[string]any{"runbookBaseURL": ""}},
			want:   []string{schemaError, "at '/alerts/runbookBaseURL': minLength: got 0, want 1"},
		},
		{
			name:   "runbook location not a URL",
			values: map[string]any{"alerts": map[string]any{"runbookBaseURL": "docs/alerts.md"}},
			want:   []string{schemaError, "at '/alerts/runbookBaseURL': 'docs/alerts.md' does not match pattern"},
		},
		// Scheduling.
		{
			name: "spread constraint without a topology key",
			values: map[string]any{"backend": map[string]any{"topologySpreadConstraints": []any{
				map[string]any{"maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"},
			}}},
			want: []string{schemaError, "at '/backend/topologySpreadConstraints/0': missing property 'topologyKey'"},
		},
		{
			name: "spread constraint with an unknown policy",
			values: map[string]any{"fleet": map[string]any{"topologySpreadConstraints": []any{
				map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "Schedule"},
			}}},
			want: []string{schemaError, "at '/fleet/topologySpreadConstraints/0/whenUnsatisfiable': value must be one of 'DoNotSchedule', 'ScheduleAnyway'"},
		},
		{
			name:   "priority class not a name",
			values: map[string]any{"backend": map[string]any{"priorityClassName": "High Priority"}},
			want:   []string{schemaError, "at '/backend/priorityClassName': 'High Priority' does not match pattern"},
		},
		// Structure.
		{
			name:   "misspelt component key",
			values: map[string]any{"fleet": map[string]any{"replica": 3}},
			want:   []string{schemaError, "at '/fleet': additional properties 'replica' not allowed"},
		},
		{
			name:   "misspelt top-level key",
			values: map[string]any{"healthport": 9091},
			want:   []string{schemaError, "additional properties 'healthport' not allowed"},
		},
		{
			name:   "port out of range",
			values: map[string]any{"metricsPort": 80800},
			want:   []string{schemaError, "at '/metricsPort': maximum"},
		},
		{
			name:   "flag name in its environment form",
			values: map[string]any{"config": map[string]any{"COSMOS_ENDPOINT": "https://x"}},
			want:   []string{schemaError, "at '/config': additional properties 'COSMOS_ENDPOINT' not allowed"},
		},
		// Templates.
		{
			name:   "one port for metrics and health",
			values: map[string]any{"metricsPort": 8081},
			want:   []string{"metricsPort and healthPort must differ"},
		},
	}
	return rows
}

// chartSetRefusals are a row per flag the chart sets itself and per place a config
// could set it: the chart would render both, and whichever the binary reads wins.
func chartSetRefusals(t *testing.T) []refusal {
	t.Helper()
	row := func(place, flag string, values map[string]any) refusal {
		return refusal{
			name:   place + "." + flag,
			values: values,
			want:   []string{place + "." + flag + ": the chart sets --" + flag + " itself"},
		}
	}
	var rows []refusal
	shared := map[string]bool{}
	bySet := chartSetFlags(t)
	for _, component := range slices.Sorted(maps.Keys(bySet)) {
		for _, flag := range bySet[component] {
			if !shared[flag] {
				shared[flag] = true
				rows = append(rows, row("config", flag, map[string]any{"config": map[string]any{flag: "x"}}))
			}
			rows = append(rows, row(component+".config", flag, map[string]any{component: map[string]any{"config": map[string]any{flag: "x"}}}))
		}
	}
	return rows
}

// TestChartRefuses renders each refused value set over the required values and asserts
// the error names the value.
func TestChartRefuses(t *testing.T) {
	rows := append(refusals(), chartSetRefusals(t)...)
	names := map[string]bool{}
	for _, tc := range rows {
		require.False(t, names[tc.name], "duplicate row %q", tc.name)
		names[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			err := renderError(t, tc.values)
			require.Error(t, err, "the chart renders %v", tc.values)
			for _, want := range tc.want {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

// TestChartDefaultsAreRefused: with nothing but values.yaml the chart refuses to render,
// and the error names every value a user must set, instead of rendering pods that
// crash-loop.
func TestChartDefaultsAreRefused(t *testing.T) {
	_, _, err := renderRawValues(t, nil)
	require.Error(t, err)
	for _, want := range []string{
		"at '/config/cosmos-endpoint': minLength: got 0, want 1",
		"at '/config/clusters-service-url': minLength: got 0, want 1",
		"at '/fleet/config/region': minLength: got 0, want 1",
		"at '/backend/serviceAccount/clientID': minLength: got 0, want 1",
		"at '/fleet/serviceAccount/clientID': minLength: got 0, want 1",
		"at '/alerts/runbookBaseURL': minLength: got 0, want 1",
	} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestChartRequiresOnlyWhatItRenders: a disabled component's required values, and the
// runbook location when no rules are rendered, are not asked for.
func TestChartRequiresOnlyWhatItRenders(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"fleet disabled, no region or fleet identity": {
			"fleet": map[string]any{"enabled": false, "config": map[string]any{"region": ""}, "serviceAccount": map[string]any{"clientID": ""}},
		},
		"backend disabled, no backend identity": {
			"backend": map[string]any{"enabled": false, "serviceAccount": map[string]any{"clientID": ""}},
		},
		"alerts disabled, no runbook location": {
			"alerts": map[string]any{"enabled": false, "runbookBaseURL": ""},
		},
		"Azure Managed Prometheus, no runbook location": {
			"serviceMonitor": map[string]any{"apiGroup": "azmonitoring.coreos.com"},
			"alerts":         map[string]any{"runbookBaseURL": ""},
		},
		"required flags in the component configs": {
			"config": map[string]any{"cosmos-endpoint": "", "clusters-service-url": ""},
			"backend": map[string]any{"config": map[string]any{
				"cosmos-endpoint": "https://x.documents.azure.com:443/", "clusters-service-url": "http://cs:8000",
			}},
			"fleet": map[string]any{"config": map[string]any{
				"cosmos-endpoint": "https://x.documents.azure.com:443/", "clusters-service-url": "http://cs:8000",
			}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			assert.NoError(t, renderError(t, values))
		})
	}
}

// chartSetFlags are, per component, the flags the chart sets on its own: every flag the
// rendered Deployment sets (ConfigMap, env, args) that no config value asked for.
func chartSetFlags(t *testing.T) map[string][]string {
	t.Helper()
	_, vals, err := renderValues(t, nil)
	require.NoError(t, err)
	values, err := vals.Table("Values")
	require.NoError(t, err)
	m := render(t, nil)
	out := map[string][]string{}
	for _, component := range []string{"backend", "fleet"} {
		configured := map[string]bool{}
		for _, path := range []string{"config", component + ".config"} {
			config, err := values.Table(path)
			require.NoError(t, err, path)
			for flag := range config {
				configured[flag] = true
			}
		}
		name := releaseName + "-" + component
		cm := object[corev1.ConfigMap](m, name)
		dep := object[appsv1.Deployment](m, name)
		require.NotNil(t, cm)
		require.NotNil(t, dep)
		vars := slices.Collect(maps.Keys(cm.Data))
		for _, env := range dep.Spec.Template.Spec.Containers[0].Env {
			vars = append(vars, env.Name)
		}
		set := map[string]bool{}
		for _, v := range vars {
			flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(v, "HCPSCHED_")), "_", "-")
			if !configured[flag] {
				set[flag] = true
			}
		}
		out[component] = slices.Sorted(maps.Keys(set))
		require.Contains(t, out[component], "metrics-address", "the chart sets the listen addresses from the ports")
	}
	return out
}
