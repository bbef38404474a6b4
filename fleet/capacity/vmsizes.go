package capacity

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
)

// VMSizes maps an Azure VM size to the per-node amount of each resource, for worker pools
// whose VM size has no ready node in the capacity report yet. Names compare
// case-insensitively.
type VMSizes map[string]api.ResourceList

// DefaultVMSizes holds the published vCPU and memory of the VM sizes ARO-HCP runs worker
// pools on. They are machine totals, not kubelet allocatable, so a ceiling computed from
// them is a little high until nodes of that size report; swift NICs come from each pool's
// aks-nic-secondary-count tag. A --vm-sizes-file entry replaces the entry of the same name.
var DefaultVMSizes = VMSizes{
	"Standard_D4ds_v5":  {"cpu": "4", "memory": "16Gi"},
	"Standard_D8ds_v5":  {"cpu": "8", "memory": "32Gi"},
	"Standard_D16ds_v5": {"cpu": "16", "memory": "64Gi"},
	"Standard_D32ds_v5": {"cpu": "32", "memory": "128Gi"},
	"Standard_E8ds_v5":  {"cpu": "8", "memory": "64Gi"},
	"Standard_E16ds_v5": {"cpu": "16", "memory": "128Gi"},
	"Standard_E32ds_v5": {"cpu": "32", "memory": "256Gi"},
}

// Lookup finds a VM size, ignoring case.
func (v VMSizes) Lookup(vmSize string) (api.ResourceList, bool) {
	if l, ok := v[vmSize]; ok {
		return l, true
	}
	for name, l := range v {
		if strings.EqualFold(name, vmSize) {
			return l, true
		}
	}
	return nil, false
}

// LoadVMSizes reads a JSON object of the same shape as DefaultVMSizes, e.g.
// {"Standard_D16ds_v5": {"cpu": "16", "memory": "64Gi", "aro.openshift.io/swift-nic": "16"}},
// and returns DefaultVMSizes with the file's entries laid over it. An empty path returns
// the defaults.
func LoadVMSizes(path string) (VMSizes, error) {
	out := VMSizes{}
	for k, v := range DefaultVMSizes {
		out[k] = v
	}
	if path == "" {
		return out, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading VM size table: %w", err)
	}
	var file VMSizes
	if err := json.Unmarshal(b, &file); err != nil {
		return nil, fmt.Errorf("VM size table %s: %w", path, err)
	}
	for name, l := range file {
		for r, v := range l {
			if _, err := resource.ParseQuantity(v); err != nil {
				return nil, fmt.Errorf("VM size table %s: %s of %s: %w", path, r, name, err)
			}
		}
		for existing := range out {
			if strings.EqualFold(existing, name) {
				delete(out, existing)
			}
		}
		out[name] = l
	}
	return out, nil
}
