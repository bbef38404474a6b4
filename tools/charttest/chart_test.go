package charttest

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// component is what one case expects of one component's objects.
type component struct {
	replicas int32
	image    string
	clientID string
	args     []string
	// env is a subset of the component's ConfigMap.
	env map[string]string
	// absentEnv are ConfigMap keys that must not be rendered, so the binary's default
	// applies.
	absentEnv []string
}

type chartCase struct {
	name           string
	values         map[string]any
	components     map[string]component
	metricsPort    string
	healthPort     string
	serviceMonitor bool
	secretEnvFrom  string
}

// overrideValues is the override set: every kind of value an operator sets for a
// real region (laid over requiredValues, like every render).
func overrideValues() map[string]any {
	return map[string]any{
		"image": map[string]any{"registry": "arohcpsvc.azurecr.io", "tag": "4f2a9c1"},
		"config": map[string]any{
			"cosmos-endpoint":      "https://arohcp-rp-uksouth.documents.azure.com:443/",
			"clusters-service-url": "http://clusters-service.clusters-service.svc:8000",
			"log-level":            "debug",
		},
		"metricsPort":    9090,
		"healthPort":     9091,
		"secretEnvFrom":  "hcpsched-clusters-service",
		"serviceMonitor": map[string]any{"enabled": false},
		"backend": map[string]any{
			"replicas":       3,
			"args":           []any{"--log-level=warn"},
			"serviceAccount": map[string]any{"clientID": "11111111-1111-1111-1111-111111111111"},
		},
		"fleet": map[string]any{
			"config":         map[string]any{"region": "uksouth"},
			"serviceAccount": map[string]any{"clientID": "22222222-2222-2222-2222-222222222222"},
		},
	}
}

func chartCases() []chartCase {
	return []chartCase{
		{
			name: "required values only",
			components: map[string]component{
				"backend": {
					replicas: 2, image: "hcpsched-backend:0.1.0",
					clientID: "33333333-3333-3333-3333-333333333333",
					env: map[string]string{
						"HCPSCHED_COSMOS_ENDPOINT":      "https://arohcp-dev.documents.azure.com:443/",
						"HCPSCHED_CLUSTERS_SERVICE_URL": "http://clusters-service.clusters-service.svc:8000",
						"HCPSCHED_COSMOS_DATABASE":      "arohcp",
						"HCPSCHED_LEADER_ELECT":         "true",
						"HCPSCHED_LOG_LEVEL":            "info",
						"HCPSCHED_METRICS_ADDRESS":      ":8080",
						"HCPSCHED_HEALTH_ADDRESS":       ":8081",
					},
					absentEnv: []string{"HCPSCHED_REGION", "HCPSCHED_AGENT_POOL_SOURCE", "HCPSCHED_PLACEMENT_WORKERS"},
				},
				"fleet": {
					replicas: 2, image: "hcpsched-fleet:0.1.0", args: []string{"controller"},
					clientID: "44444444-4444-4444-4444-444444444444",
					env: map[string]string{
						"HCPSCHED_REGION":               "westus3",
						"HCPSCHED_COSMOS_ENDPOINT":      "https://arohcp-dev.documents.azure.com:443/",
						"HCPSCHED_CLUSTERS_SERVICE_URL": "http://clusters-service.clusters-service.svc:8000",
						"HCPSCHED_AGENT_POOL_SOURCE":    "arm",
						"HCPSCHED_AZURE_CLOUD":          "AzurePublic",
						"HCPSCHED_COSMOS_DATABASE":      "arohcp",
						"HCPSCHED_LEADER_ELECT":         "true",
					},
					absentEnv: []string{"HCPSCHED_WORKERS", "HCPSCHED_AGENT_POOL_FILE"},
				},
			},
			metricsPort: "8080", healthPort: "8081", serviceMonitor: true,
		},
		{
			name:   "overrides",
			values: overrideValues(),
			components: map[string]component{
				"backend": {
					replicas: 3, image: "arohcpsvc.azurecr.io/hcpsched-backend:4f2a9c1",
					clientID: "11111111-1111-1111-1111-111111111111",
					args:     []string{"--log-level=warn"},
					env: map[string]string{
						"HCPSCHED_COSMOS_ENDPOINT":      "https://arohcp-rp-uksouth.documents.azure.com:443/",
						"HCPSCHED_CLUSTERS_SERVICE_URL": "http://clusters-service.clusters-service.svc:8000",
						"HCPSCHED_LOG_LEVEL":            "debug",
						"HCPSCHED_METRICS_ADDRESS":      ":9090",
						"HCPSCHED_HEALTH_ADDRESS":       ":9091",
					},
					absentEnv: []string{"HCPSCHED_REGION", "HCPSCHED_AGENT_POOL_SOURCE"},
				},
				"fleet": {
					replicas: 2, image: "arohcpsvc.azurecr.io/hcpsched-fleet:4f2a9c1",
					clientID: "22222222-2222-2222-2222-222222222222",
					args:     []string{"controller"},
					env: map[string]string{
						"HCPSCHED_REGION":               "uksouth",
						"HCPSCHED_AGENT_POOL_SOURCE":    "arm",
						"HCPSCHED_COSMOS_ENDPOINT":      "https://arohcp-rp-uksouth.documents.azure.com:443/",
						"HCPSCHED_CLUSTERS_SERVICE_URL": "http://clusters-service.clusters-service.svc:8000",
					},
				},
			},
			metricsPort: "9090", healthPort: "9091", secretEnvFrom: "hcpsched-clusters-service",
		},
		{
			name:   "fleet disabled",
			values: map[string]any{"fleet": map[string]any{"enabled": false}},
			components: map[string]component{
				"backend": {replicas: 2, image: "hcpsched-backend:0.1.0", clientID: "33333333-3333-3333-3333-333333333333"},
			},
			metricsPort: "8080", healthPort: "8081", serviceMonitor: true,
		},
	}
}

func TestChart(t *testing.T) {
	for _, tc := range chartCases() {
		t.Run(tc.name, func(t *testing.T) {
			m := render(t, tc.values)

			// Nothing but the expected components' objects is rendered.
			n := len(tc.components)
			for _, kind := range []string{"Deployment", "ServiceAccount", "ConfigMap", "Service", "Role", "RoleBinding", "PodDisruptionBudget"} {
				assert.Equal(t, n, m.count(kind), kind)
			}
			monitors := 0
			if tc.serviceMonitor {
				monitors = n
			}
			assert.Equal(t, monitors, m.count("ServiceMonitor"))
			// The alerts are the region's, not a component's.
			assert.Equal(t, len(chartRuleFiles(t)), m.count("PrometheusRule"))

			for name, want := range tc.components {
				t.Run(name, func(t *testing.T) {
					checkComponent(t, tc, m, releaseName+"-"+name, want)
				})
			}
		})
	}
}

func checkComponent(t *testing.T, tc chartCase, m manifests, name string, want component) {
	dep := object[appsv1.Deployment](m, name)
	require.NotNil(t, dep, "Deployment %s", name)
	require.NotNil(t, dep.Spec.Replicas)
	assert.Equal(t, want.replicas, *dep.Spec.Replicas)
	podLabels := labels.Set(dep.Spec.Template.Labels)
	assert.True(t, selects(t, dep.Spec.Selector, podLabels), "the Deployment selects its own pods")
	assert.Equal(t, "true", podLabels["azure.workload.identity/use"], "workload identity injects the federated token")

	pod := dep.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	ctr := pod.Containers[0]
	assert.Equal(t, want.image, ctr.Image)
	assert.Equal(t, want.args, ctr.Args)
	checkSecurity(t, pod, ctr)

	t.Run("service account", func(t *testing.T) {
		sa := object[corev1.ServiceAccount](m, pod.ServiceAccountName)
		require.NotNil(t, sa, "ServiceAccount %q", pod.ServiceAccountName)
		require.NotEmpty(t, want.clientID, "every enabled component has its workload identity")
		assert.Equal(t, want.clientID, sa.Annotations["azure.workload.identity/client-id"])

		role := object[rbacv1.Role](m, name+"-leader-election")
		require.NotNil(t, role)
		require.Len(t, role.Rules, 1)
		assert.Equal(t, []string{"coordination.k8s.io"}, role.Rules[0].APIGroups)
		assert.Equal(t, []string{"leases"}, role.Rules[0].Resources)
		assert.ElementsMatch(t, []string{"get", "create", "update"}, role.Rules[0].Verbs)

		binding := object[rbacv1.RoleBinding](m, name+"-leader-election")
		require.NotNil(t, binding)
		assert.Equal(t, "Role", binding.RoleRef.Kind)
		assert.Equal(t, role.Name, binding.RoleRef.Name)
		require.Len(t, binding.Subjects, 1)
		assert.Equal(t, "ServiceAccount", binding.Subjects[0].Kind)
		assert.Equal(t, sa.Name, binding.Subjects[0].Name)
		assert.Equal(t, releaseNamespace, binding.Subjects[0].Namespace)
	})

	t.Run("config", func(t *testing.T) {
		var cmName, secretName string
		for _, src := range ctr.EnvFrom {
			switch {
			case src.ConfigMapRef != nil:
				cmName = src.ConfigMapRef.Name
			case src.SecretRef != nil:
				secretName = src.SecretRef.Name
			}
		}
		assert.Equal(t, tc.secretEnvFrom, secretName)
		cm := object[corev1.ConfigMap](m, cmName)
		require.NotNil(t, cm, "ConfigMap %q loaded with envFrom", cmName)
		for key, value := range want.env {
			assert.Equal(t, value, cm.Data[key], key)
		}
		for _, key := range want.absentEnv {
			assert.NotContains(t, cm.Data, key, "an empty value must leave the binary's default")
		}
		assert.Equal(t, tc.healthPort, listenPort(t, cm.Data["HCPSCHED_HEALTH_ADDRESS"]))
		assert.Equal(t, tc.metricsPort, listenPort(t, cm.Data["HCPSCHED_METRICS_ADDRESS"]))
		assert.NotEmpty(t, dep.Spec.Template.Annotations["checksum/config"], "a config change rolls the pods")

		env := map[string]*corev1.EnvVarSource{}
		for _, e := range ctr.Env {
			env[e.Name] = e.ValueFrom
		}
		require.NotNil(t, env["HCPSCHED_LEADER_ELECTION_NAMESPACE"])
		assert.Equal(t, "metadata.namespace", env["HCPSCHED_LEADER_ELECTION_NAMESPACE"].FieldRef.FieldPath)
		require.NotNil(t, env["HCPSCHED_LEADER_ELECTION_IDENTITY"])
		assert.Equal(t, "metadata.name", env["HCPSCHED_LEADER_ELECTION_IDENTITY"].FieldRef.FieldPath)
	})

	t.Run("probes", func(t *testing.T) {
		for probeName, probe := range map[string]struct {
			probe *corev1.Probe
			path  string
		}{
			"liveness":  {ctr.LivenessProbe, "/healthz"},
			"readiness": {ctr.ReadinessProbe, "/readyz"},
			"startup":   {ctr.StartupProbe, "/healthz"},
		} {
			require.NotNil(t, probe.probe, probeName)
			require.NotNil(t, probe.probe.HTTPGet, probeName)
			assert.Equal(t, probe.path, probe.probe.HTTPGet.Path, probeName)
			assert.Equal(t, tc.healthPort, containerPort(t, ctr, probe.probe.HTTPGet.Port.String()), probeName)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		svc := object[corev1.Service](m, name+"-metrics")
		require.NotNil(t, svc)
		assert.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels), "the Service selects the pods")
		require.Len(t, svc.Spec.Ports, 1)
		assert.Equal(t, tc.metricsPort, containerPort(t, ctr, svc.Spec.Ports[0].TargetPort.String()))

		sm := object[serviceMonitor](m, name)
		if !tc.serviceMonitor {
			assert.Nil(t, sm)
			return
		}
		require.NotNil(t, sm)
		assert.True(t, selects(t, &sm.Spec.Selector, labels.Set(svc.Labels)), "the ServiceMonitor selects the Service")
		assert.Equal(t, []string{releaseNamespace}, sm.Spec.NamespaceSelector.MatchNames)
		require.Len(t, sm.Spec.Endpoints, 1)
		assert.Equal(t, svc.Spec.Ports[0].Name, sm.Spec.Endpoints[0].Port)
		assert.Equal(t, "/metrics", sm.Spec.Endpoints[0].Path)
	})

	t.Run("disruption budget", func(t *testing.T) {
		pdb := object[policyv1.PodDisruptionBudget](m, name)
		require.NotNil(t, pdb)
		assert.True(t, selects(t, pdb.Spec.Selector, podLabels), "the PodDisruptionBudget covers the pods")
		require.NotNil(t, pdb.Spec.MaxUnavailable)
		assert.Equal(t, 1, pdb.Spec.MaxUnavailable.IntValue())
	})
}

// checkSecurity asserts the pod runs as the image's non-root user on a read-only root
// filesystem with nothing it could escalate to.
func checkSecurity(t *testing.T, pod corev1.PodSpec, ctr corev1.Container) {
	t.Helper()
	require.NotNil(t, pod.SecurityContext)
	assert.Equal(t, ptrTo(true), pod.SecurityContext.RunAsNonRoot)
	require.NotNil(t, pod.SecurityContext.RunAsUser)
	assert.NotZero(t, *pod.SecurityContext.RunAsUser)
	require.NotNil(t, pod.SecurityContext.SeccompProfile)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type)

	sc := ctr.SecurityContext
	require.NotNil(t, sc)
	assert.Equal(t, ptrTo(true), sc.RunAsNonRoot)
	assert.Equal(t, ptrTo(true), sc.ReadOnlyRootFilesystem)
	assert.Equal(t, ptrTo(false), sc.AllowPrivilegeEscalation)
	require.NotNil(t, sc.Capabilities)
	assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	assert.Empty(t, sc.Capabilities.Add)
	assert.Nil(t, sc.Privileged)
}

// containerPort resolves a probe's or Service's target port, by name or number, to the
// container port number.
func containerPort(t *testing.T, ctr corev1.Container, port string) string {
	t.Helper()
	for _, p := range ctr.Ports {
		number := strconv.Itoa(int(p.ContainerPort))
		if p.Name == port || number == port {
			return number
		}
	}
	require.Failf(t, "unknown port", "container %s has no port %q", ctr.Name, port)
	return ""
}

func selects(t *testing.T, selector *metav1.LabelSelector, set labels.Set) bool {
	t.Helper()
	require.NotNil(t, selector)
	s, err := metav1.LabelSelectorAsSelector(selector)
	require.NoError(t, err)
	return !s.Empty() && s.Matches(set)
}

func ptrTo[T any](v T) *T { return &v }
