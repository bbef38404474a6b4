package charttest

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// commands are the commands the images ship, by package, with the section of
// docs/configuration.md that lists their flags (fleet's flags belong to its controller
// subcommand, which the chart runs).
var commands = map[string]string{
	"backend": "backend",
	"fleet":   "fleet controller",
}

// documentedFlag is a flag row of docs/configuration.md: | `--name` | ...
var documentedFlag = regexp.MustCompile("^\\| `--([a-z][a-z0-9-]*)`")

// documentedFlags reads the flags of each section of docs/configuration.md. That
// document is generated from the commands' flag sets and compared with them by each
// command's TestConfigurationDoc, so it is the flag set without building the binaries.
func documentedFlags(t *testing.T) map[string]map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "docs", "configuration.md"))
	require.NoError(t, err)
	defer f.Close()
	sections := map[string]map[string]bool{}
	var current map[string]bool
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := scanner.Text()
		if title, ok := strings.CutPrefix(line, "## "); ok {
			current = map[string]bool{}
			sections[title] = current
			continue
		}
		if m := documentedFlag.FindStringSubmatch(line); m != nil && current != nil {
			current[m[1]] = true
		}
	}
	require.NoError(t, scanner.Err())
	return sections
}

// TestChartSetsOnlyExistingFlags checks that every flag the chart sets through
// HCPSCHED_* variables or args exists, so a renamed flag cannot silently drop a setting
// from the deployment.
func TestChartSetsOnlyExistingFlags(t *testing.T) {
	rendered := []manifests{render(t, nil), render(t, overrideValues())}
	documented := documentedFlags(t)
	for pkg, section := range commands {
		t.Run(pkg, func(t *testing.T) {
			flags := documented[section]
			require.Contains(t, flags, "health-address", "docs/configuration.md has a %q section listing the flags", section)
			for _, m := range rendered {
				dep := object[appsv1.Deployment](m, releaseName+"-"+pkg)
				require.NotNil(t, dep)
				ctr := dep.Spec.Template.Spec.Containers[0]
				var set []string
				for key := range object[corev1.ConfigMap](m, releaseName+"-"+pkg).Data {
					set = append(set, key)
				}
				for _, env := range ctr.Env {
					set = append(set, env.Name)
				}
				for _, name := range set {
					flag, ok := strings.CutPrefix(name, "HCPSCHED_")
					require.True(t, ok, "%s is not a flag variable", name)
					assert.Contains(t, flags, strings.ReplaceAll(strings.ToLower(flag), "_", "-"), "%s sets no flag of %s", name, pkg)
				}
				for _, arg := range ctr.Args {
					if flag, ok := strings.CutPrefix(arg, "--"); ok {
						flag, _, _ = strings.Cut(flag, "=")
						assert.Contains(t, flags, flag, "argument %s is no flag of %s", arg, pkg)
					}
				}
			}
		})
	}
}

// listedPackage is what go list -json says of one dependency.
type listedPackage struct {
	ImportPath string
	CgoFiles   []string
	Error      *struct{ Err string }
	DepsErrors []struct{ Err string }
}

// TestCommandsAreStatic proves, the way the Dockerfiles build (the product module alone,
// cgo off, for linux), that each command builds from pure Go and links statically, as the
// distroless static image needs: every dependency resolves with cgo off (a package that
// needs cgo has no files left and fails to load), and runtime/cgo, the only way a Go
// binary gets a dynamic loader without -linkmode=external, is not among them. It reads
// the package graph instead of building: a static build shares no build cache with the
// race-enabled tests, so on a cold cache it compiled the Azure SDK, client-go and the OCM
// SDK once more, about 2.5 of make test's minutes on two cores.
func TestCommandsAreStatic(t *testing.T) {
	var built []string
	for pkg := range commands {
		built = append(built, pkg)
		built = append(built, imageCommands[pkg]...)
	}
	for _, pkg := range built {
		t.Run(pkg, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "-e", "-json=ImportPath,CgoFiles,Error,DepsErrors", "./"+pkg)
			cmd.Dir = repoRoot
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOOS=linux")
			out, err := cmd.Output()
			require.NoError(t, err, "go list -deps ./%s", pkg)
			dec := json.NewDecoder(strings.NewReader(string(out)))
			var listed []string
			for {
				var p listedPackage
				err := dec.Decode(&p)
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				listed = append(listed, p.ImportPath)
				if p.Error != nil {
					assert.Fail(t, "a dependency does not load with cgo off", "%s: %s", p.ImportPath, p.Error.Err)
				}
				for _, e := range p.DepsErrors {
					assert.Fail(t, "a dependency does not load with cgo off", "%s: %s", p.ImportPath, e.Err)
				}
				assert.Empty(t, p.CgoFiles, "%s compiles cgo files with cgo off", p.ImportPath)
			}
			assert.Contains(t, listed, "github.com/hcpsched/hcpsched/"+pkg, "go list listed the command itself")
			assert.NotContains(t, listed, "runtime/cgo", "./%s links runtime/cgo: the binary would need a dynamic loader", pkg)
		})
	}
}
