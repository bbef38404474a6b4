package charttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

var components = []string{"backend", "fleet"}

func TestServiceMonitorAPIGroup(t *testing.T) {
	for _, tc := range []struct {
		name       string
		values     map[string]any
		apiVersion string
		// limits are labelLimit, labelNameLengthLimit and labelValueLengthLimit, or nil.
		limits []int64
	}{
		{name: "default: prometheus-operator", apiVersion: "monitoring.coreos.com/v1"},
		{
			name:       "Azure Managed Prometheus",
			values:     map[string]any{"serviceMonitor": map[string]any{"apiGroup": "azmonitoring.coreos.com"}},
			apiVersion: "azmonitoring.coreos.com/v1",
			limits:     []int64{63, 511, 1023},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := render(t, tc.values)
			require.Equal(t, len(components), m.count("ServiceMonitor"))
			for _, c := range components {
				name := releaseName + "-" + c
				sm := object[serviceMonitor](m, name)
				require.NotNil(t, sm, name)
				assert.Equal(t, tc.apiVersion, sm.APIVersion)
				assert.Equal(t, "ServiceMonitor", sm.Kind)
				svc := object[corev1.Service](m, name+"-metrics")
				require.NotNil(t, svc)
				assert.True(t, selects(t, &sm.Spec.Selector, labels.Set(svc.Labels)), "the ServiceMonitor selects the Service")
				require.Len(t, sm.Spec.Endpoints, 1)
				assert.Equal(t, "metrics", sm.Spec.Endpoints[0].Port)
				assert.Equal(t, "30s", sm.Spec.Endpoints[0].Interval)
				var limits []int64
				for _, l := range []*int64{sm.Spec.LabelLimit, sm.Spec.LabelNameLengthLimit, sm.Spec.LabelValueLengthLimit} {
					if l != nil {
						limits = append(limits, *l)
					}
				}
				assert.Equal(t, tc.limits, limits)
			}
		})
	}
}

// TestPrometheusRules: a PrometheusRule per rule file, whose groups are the file's with
// every runbook_url pointing at the configured base.
func TestPrometheusRules(t *testing.T) {
	files := chartRuleFiles(t)
	for _, tc := range []struct {
		name   string
		values map[string]any
		// rendered is false when no PrometheusRule may be rendered.
		rendered bool
		labels   map[string]string
	}{
		{name: "default", rendered: true},
		{
			name: "base with a trailing # and labels",
			values: map[string]any{"alerts": map[string]any{
				"runbookBaseURL": runbookBase + "#", "labels": map[string]any{"prometheus": "aro-hcp"},
			}},
			rendered: true, labels: map[string]string{"prometheus": "aro-hcp"},
		},
		{
			name:     "ServiceMonitor disabled: the rules stay",
			values:   map[string]any{"serviceMonitor": map[string]any{"enabled": false}},
			rendered: true,
		},
		{name: "disabled", values: map[string]any{"alerts": map[string]any{"enabled": false}}},
		{name: "Azure Managed Prometheus has no PrometheusRule", values: map[string]any{"serviceMonitor": map[string]any{"apiGroup": "azmonitoring.coreos.com"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := render(t, tc.values)
			if !tc.rendered {
				assert.Zero(t, m.count("PrometheusRule"))
				return
			}
			require.Equal(t, len(files), m.count("PrometheusRule"))
			for _, file := range files {
				b, err := os.ReadFile(file)
				require.NoError(t, err)
				var want ruleGroups
				require.NoError(t, yaml.UnmarshalStrict(b, &want))
				alerts := 0
				for _, g := range want.Groups {
					for _, r := range g.Rules {
						if url, ok := r.Annotations["runbook_url"]; ok {
							_, anchor, _ := strings.Cut(url, "#")
							r.Annotations["runbook_url"] = runbookBase + "#" + anchor
							assert.Equal(t, strings.ToLower(r.Alert), anchor, "the section is the alert's")
						}
						if r.Alert != "" {
							alerts++
						}
					}
				}
				require.NotZero(t, alerts, file)

				name := releaseName + "-" + strings.TrimSuffix(filepath.Base(file), ".rules.yaml")
				rule := object[prometheusRule](m, name)
				require.NotNil(t, rule, "PrometheusRule %s", name)
				assert.Equal(t, want, rule.Spec, "the groups of %s, runbook_urls at %s", file, runbookBase)
				assert.Equal(t, "hcpsched", rule.Labels["app.kubernetes.io/name"])
				assert.Equal(t, releaseName, rule.Labels["app.kubernetes.io/instance"])
				assert.NotContains(t, rule.Labels, "app.kubernetes.io/component", "the alerts are the region's, not one component's")
				for k, v := range tc.labels {
					assert.Equal(t, v, rule.Labels[k], k)
				}
			}
		})
	}
}

func TestTopologySpread(t *testing.T) {
	zone := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway}
	host := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway}
	strictZone := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule}
	for _, tc := range []struct {
		name   string
		values map[string]any
		// want are the constraints per component, without their labelSelector, which
		// must select exactly the component's pods unless ownSelector says otherwise.
		want        map[string][]corev1.TopologySpreadConstraint
		ownSelector map[string]string
	}{
		{
			name: "default: zones then nodes",
			want: map[string][]corev1.TopologySpreadConstraint{"backend": {zone, host}, "fleet": {zone, host}},
		},
		{
			name: "overridden for one component",
			values: map[string]any{"fleet": map[string]any{"topologySpreadConstraints": []any{
				map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"},
			}}},
			want: map[string][]corev1.TopologySpreadConstraint{"backend": {zone, host}, "fleet": {strictZone}},
		},
		{
			name: "a constraint's own selector is kept",
			values: map[string]any{"backend": map[string]any{"topologySpreadConstraints": []any{
				map[string]any{
					"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
					"labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "hcpsched"}},
				},
			}}},
			want:        map[string][]corev1.TopologySpreadConstraint{"backend": {zone}, "fleet": {zone, host}},
			ownSelector: map[string]string{"app.kubernetes.io/name": "hcpsched"},
		},
		{
			name:   "disabled",
			values: map[string]any{"backend": map[string]any{"topologySpreadConstraints": []any{}}},
			want:   map[string][]corev1.TopologySpreadConstraint{"backend": nil, "fleet": {zone, host}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := render(t, tc.values)
			pods := map[string]labels.Set{}
			for _, c := range components {
				dep := object[appsv1.Deployment](m, releaseName+"-"+c)
				require.NotNil(t, dep)
				pods[c] = dep.Spec.Template.Labels
			}
			for _, c := range components {
				dep := object[appsv1.Deployment](m, releaseName+"-"+c)
				var got []corev1.TopologySpreadConstraint
				for _, tsc := range dep.Spec.Template.Spec.TopologySpreadConstraints {
					if tc.ownSelector != nil && c == "backend" {
						assert.Equal(t, tc.ownSelector, tsc.LabelSelector.MatchLabels)
					} else {
						for other, set := range pods {
							assert.Equal(t, other == c, selects(t, tsc.LabelSelector, set), "%s's constraint selects %s's pods", c, other)
						}
					}
					tsc.LabelSelector = nil
					got = append(got, tsc)
				}
				assert.Equal(t, tc.want[c], got, c)
			}
		})
	}
}

func TestPriorityClass(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   map[string]string
	}{
		{name: "default: the cluster's", want: map[string]string{"backend": "", "fleet": ""}},
		{
			name:   "per component",
			values: map[string]any{"backend": map[string]any{"priorityClassName": "aro-hcp-critical"}},
			want:   map[string]string{"backend": "aro-hcp-critical", "fleet": ""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := render(t, tc.values)
			for c, want := range tc.want {
				dep := object[appsv1.Deployment](m, releaseName+"-"+c)
				require.NotNil(t, dep)
				assert.Equal(t, want, dep.Spec.Template.Spec.PriorityClassName, c)
			}
		})
	}
}
