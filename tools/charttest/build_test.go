package charttest

import (
	"debug/elf"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// binaries are the commands the images ship, with the arguments that make each print
// its flags (fleet's flags belong to its controller subcommand, which the chart runs).
var binaries = map[string][]string{
	"backend": {"-h"},
	"fleet":   {"controller", "-h"},
}

// buildStatic builds the commands the way the Dockerfiles do: the product module alone,
// cgo off, paths trimmed. One go build for all of them: that configuration shares no
// build cache with the race-enabled tests, so on a cold cache the commands' common
// dependencies (the Azure SDK, client-go, the OCM SDK) are compiled here from scratch,
// and two builds side by side compiled them twice (TestBinaries took 327 s cold on two
// cores; one build takes about half). It returns each command's binary by package.
func buildStatic(t *testing.T, pkgs ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"build", "-trimpath", "-o", dir + string(filepath.Separator)}
	for _, pkg := range pkgs {
		args = append(args, "./"+pkg)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	output, err := cmd.CombinedOutput()
	require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), output)
	bins := map[string]string{}
	for _, pkg := range pkgs {
		bins[pkg] = filepath.Join(dir, filepath.Base(pkg))
		require.FileExists(t, bins[pkg])
	}
	return bins
}

var flagLine = regexp.MustCompile(`(?m)^\s+-([a-z][a-z0-9-]*)`)

// TestBinaries builds each command statically, proves it needs no dynamic loader (the
// distroless static image has none) and checks that every flag the chart sets through
// HCPSCHED_* variables or args exists, so a renamed flag cannot silently drop a
// setting from the deployment.
func TestBinaries(t *testing.T) {
	rendered := []manifests{render(t, nil), render(t, overrideValues())}
	built := buildStatic(t, slices.Sorted(maps.Keys(binaries))...)
	for pkg, helpArgs := range binaries {
		t.Run(pkg, func(t *testing.T) {
			t.Parallel()
			bin := built[pkg]

			f, err := elf.Open(bin)
			require.NoError(t, err)
			defer f.Close()
			for _, prog := range f.Progs {
				assert.NotEqual(t, elf.PT_INTERP, prog.Type, "a static binary has no interpreter")
				assert.NotEqual(t, elf.PT_DYNAMIC, prog.Type, "a static binary has no dynamic section")
			}
			assert.Nil(t, f.Section(".dynamic"))

			if runtime.GOOS != "linux" {
				return
			}
			// -h exits non-zero after printing the usage; only the output matters.
			usage, _ := exec.Command(bin, helpArgs...).CombinedOutput()
			flags := map[string]bool{}
			for _, match := range flagLine.FindAllStringSubmatch(string(usage), -1) {
				flags[match[1]] = true
			}
			require.Contains(t, flags, "health-address", "usage of %s:\n%s", pkg, usage)

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
