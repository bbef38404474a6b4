package charttest

import (
	"net"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// repoRoot is the product repository as seen from this package's directory, where
// go test runs it.
const repoRoot = "../.."

const (
	chartDir         = repoRoot + "/deploy/charts/hcpsched"
	releaseName      = "hcpsched"
	releaseNamespace = "aro-hcp"
)

// serviceMonitor is the part of prometheus-operator's monitoring.coreos.com/v1
// ServiceMonitor the chart uses. The operator's Go types pull in a large dependency
// tree; decoding strictly into this struct still rejects any field the chart
// misspells or that this struct does not know, so extending the template means
// extending the struct on purpose.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
		// The limits Azure Managed Prometheus asks every ServiceMonitor to carry.
		LabelLimit            *int64 `json:"labelLimit,omitempty"`
		LabelNameLengthLimit  *int64 `json:"labelNameLengthLimit,omitempty"`
		LabelValueLengthLimit *int64 `json:"labelValueLengthLimit,omitempty"`
	} `json:"spec"`
}

// prometheusRule is prometheus-operator's monitoring.coreos.com/v1 PrometheusRule, as
// far as the chart uses it; decoded strictly for the same reason as serviceMonitor.
type prometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ruleGroups `json:"spec"`
}

// ruleGroups is a Prometheus rule file: what observability/alerts/*.rules.yaml hold and
// a PrometheusRule's spec.
type ruleGroups struct {
	Groups []struct {
		Name     string `json:"name"`
		Interval string `json:"interval,omitempty"`
		Rules    []struct {
			Alert       string            `json:"alert,omitempty"`
			Record      string            `json:"record,omitempty"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels,omitempty"`
			Annotations map[string]string `json:"annotations,omitempty"`
		} `json:"rules"`
	} `json:"groups"`
}

// kinds are the objects the chart may render, by apiVersion/kind, each with the
// type it must decode into strictly.
var kinds = map[string]func() any{
	"apps/v1/Deployment":                        func() any { return new(appsv1.Deployment) },
	"v1/ServiceAccount":                         func() any { return new(corev1.ServiceAccount) },
	"v1/ConfigMap":                              func() any { return new(corev1.ConfigMap) },
	"v1/Service":                                func() any { return new(corev1.Service) },
	"rbac.authorization.k8s.io/v1/Role":         func() any { return new(rbacv1.Role) },
	"rbac.authorization.k8s.io/v1/RoleBinding":  func() any { return new(rbacv1.RoleBinding) },
	"policy/v1/PodDisruptionBudget":             func() any { return new(policyv1.PodDisruptionBudget) },
	"monitoring.coreos.com/v1/ServiceMonitor":   func() any { return new(serviceMonitor) },
	"azmonitoring.coreos.com/v1/ServiceMonitor": func() any { return new(serviceMonitor) },
	"monitoring.coreos.com/v1/PrometheusRule":   func() any { return new(prometheusRule) },
}

// manifests is a rendered release: every object decoded into its API type, keyed by
// kind and then name.
type manifests map[string]map[string]any

// object returns the named object of type T, or nil when the chart rendered none.
func object[T any](m manifests, name string) *T {
	for _, byName := range m {
		if obj, ok := byName[name].(*T); ok {
			return obj
		}
	}
	return nil
}

// count is how many objects of the kind were rendered.
func (m manifests) count(kind string) int { return len(m[kind]) }

// runbookBase is the runbook location every render configures (alerts.runbookBaseURL).
const runbookBase = "https://runbooks.example.com/hcpsched/docs/alerts.md"

// requiredValues are the values the chart refuses to render without: what the binaries
// refuse to start without, the workload identities and the runbook location. Every
// render starts from them; a case that tests a refusal overrides one with "".
func requiredValues() map[string]any {
	return map[string]any{
		"config": map[string]any{
			"cosmos-endpoint":      "https://arohcp-dev.documents.azure.com:443/",
			"clusters-service-url": "http://clusters-service.clusters-service.svc:8000",
		},
		"alerts": map[string]any{"runbookBaseURL": runbookBase},
		"backend": map[string]any{
			"serviceAccount": map[string]any{"clientID": "33333333-3333-3333-3333-333333333333"},
		},
		"fleet": map[string]any{
			"config":         map[string]any{"region": "westus3"},
			"serviceAccount": map[string]any{"clientID": "44444444-4444-4444-4444-444444444444"},
		},
	}
}

// withRequired is overrides laid over requiredValues: maps merge key by key, anything
// else in overrides (a list, a scalar, nil) replaces the required value, as Helm merges
// a -f file over values.yaml.
func withRequired(overrides map[string]any) map[string]any {
	return mergeValues(requiredValues(), overrides)
}

func mergeValues(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if base, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(base, sub)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// renderValues loads the chart and computes the values a release named releaseName in
// releaseNamespace renders with, validated against values.schema.json. The overrides
// are laid over requiredValues.
func renderValues(t *testing.T, overrides map[string]any) (*chart.Chart, chartutil.Values, error) {
	t.Helper()
	return renderRawValues(t, withRequired(overrides))
}

// renderRawValues is renderValues with exactly the given values over values.yaml.
func renderRawValues(t *testing.T, values map[string]any) (*chart.Chart, chartutil.Values, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	require.NoError(t, err, "loading the chart")
	vals, err := chartutil.ToRenderValues(chrt, values, chartutil.ReleaseOptions{
		Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true,
	}, chartutil.DefaultCapabilities)
	return chrt, vals, err
}

// renderError is the error `helm install` would stop with for the overrides (laid over
// requiredValues): the schema's, or the templates' (a `fail`); nil if it renders.
func renderError(t *testing.T, overrides map[string]any) error {
	t.Helper()
	chrt, vals, err := renderValues(t, overrides)
	if err != nil {
		return err
	}
	_, err = engine.Engine{Strict: true}.Render(chrt, vals)
	return err
}

// render renders the chart as `helm install` would with the given value overrides (laid
// over requiredValues) and decodes every manifest strictly: a field the API type does
// not have fails the test, as would a kind the chart is not expected to produce.
func render(t *testing.T, overrides map[string]any) manifests {
	t.Helper()
	chrt, vals, err := renderValues(t, overrides)
	require.NoError(t, err, "computing the render values")
	// Strict makes a reference to a value that does not exist an error, not "".
	files, err := engine.Engine{Strict: true}.Render(chrt, vals)
	require.NoError(t, err, "rendering the chart")

	m := manifests{}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, file := range names {
		if strings.HasSuffix(file, "NOTES.txt") || strings.HasPrefix(file[strings.LastIndex(file, "/")+1:], "_") {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(files[file]) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			m.add(t, file, doc)
		}
	}
	return m
}

func (m manifests) add(t *testing.T, file, doc string) {
	t.Helper()
	var meta struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &meta), "%s: reading kind and name", file)
	require.Equal(t, releaseNamespace, meta.Namespace, "%s: %s %s must be namespaced to the release", file, meta.Kind, meta.Name)
	gvk := meta.APIVersion + "/" + meta.Kind
	newObject, ok := kinds[gvk]
	require.True(t, ok, "%s renders unexpected %s %s", file, gvk, meta.Name)
	obj := newObject()
	require.NoError(t, yaml.UnmarshalStrict([]byte(doc), obj), "%s: strict decoding:\n%s", file, doc)
	if m[meta.Kind] == nil {
		m[meta.Kind] = map[string]any{}
	}
	_, dup := m[meta.Kind][meta.Name]
	require.False(t, dup, "%s: %s %s rendered twice", file, meta.Kind, meta.Name)
	m[meta.Kind][meta.Name] = obj
}

// listenPort is the port of a Go listen address such as ":8081".
func listenPort(t *testing.T, address string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(address)
	require.NoError(t, err, "listen address %q", address)
	return port
}
