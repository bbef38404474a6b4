package process

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// serviceAccountNamespaceFile is where the kubelet mounts the pod's namespace.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// newKubeClient builds the client leader election uses: from a kubeconfig file when one
// is given, else from the pod's service account.
func newKubeClient(kubeconfig, component string) (kubernetes.Interface, error) {
	var (
		cfg *rest.Config
		err error
	)
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("loading --kubeconfig %s: %w", kubeconfig, err)
		}
	} else {
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster Kubernetes config (set --kubeconfig, or --leader-elect=false to run without Kubernetes): %w", err)
		}
	}
	cfg.UserAgent = "hcpsched-" + component
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return client, nil
}

// leaseNamespace is the configured namespace, else the pod's own.
func leaseNamespace(configured string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	data, err := os.ReadFile(serviceAccountNamespaceFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", errors.New("--leader-election-namespace is required outside a pod")
		}
		return "", fmt.Errorf("reading the pod namespace: %w", err)
	}
	ns := strings.TrimSpace(string(data))
	if ns == "" {
		return "", fmt.Errorf("%s is empty: set --leader-election-namespace", serviceAccountNamespaceFile)
	}
	return ns, nil
}
