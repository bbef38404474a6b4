package charttest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// instruction is one Dockerfile instruction with its continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, COPY, ...
	args string
}

// stage is the instructions from one FROM to the next.
type stage struct {
	from         string
	name         string
	instructions []instruction
}

func (s stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.instructions {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// parseDockerfile reads the subset of the Dockerfile syntax the project uses; there
// is no Docker engine here to build the images, so the test checks what the build
// would do.
func parseDockerfile(t *testing.T, path string) []stage {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var stages []stage
	var pending string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if pending == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			pending += cont + " "
			continue
		}
		line, pending = pending+line, ""
		cmd, args, _ := strings.Cut(line, " ")
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			fields := strings.Fields(in.args)
			st := stage{from: fields[0]}
			if len(fields) == 3 && strings.EqualFold(fields[1], "AS") {
				st.name = fields[2]
			}
			stages = append(stages, st)
			continue
		}
		require.NotEmpty(t, stages, "%s: %s before FROM", path, in.cmd)
		stages[len(stages)-1].instructions = append(stages[len(stages)-1].instructions, in)
	}
	return stages
}

// moduleDirs lists the top-level directories of the product repository holding the
// packages cmd/pkg is built from.
func moduleDirs(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "./"+pkg)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	require.NoError(t, err, "go list -deps ./%s", pkg)
	root, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	seen := map[string]bool{}
	var dirs []string
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		require.NoError(t, err)
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if !seen[top] {
			seen[top] = true
			dirs = append(dirs, top)
		}
	}
	return dirs
}

// imageCommands are the commands each image carries beside its own: the backend's image
// carries the operator command, so that an SRE runs it inside the backend's pod with the
// backend's environment and identity (docs/operations.md).
var imageCommands = map[string][]string{
	"backend": {"hcpsched"},
}

// distrolessPath is the PATH of the distroless images, where `kubectl exec ... -- <cmd>`
// finds an extra command.
var distrolessPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

func TestDockerfiles(t *testing.T) {
	for pkg := range commands {
		t.Run(pkg, func(t *testing.T) {
			stages := parseDockerfile(t, filepath.Join(repoRoot, "deploy", "docker", pkg+".Dockerfile"))
			require.Len(t, stages, 2, "a builder and a final stage")
			builder, final := stages[0], stages[1]
			assert.True(t, strings.HasPrefix(builder.from, "golang:1.26"), "builder image %s", builder.from)
			require.NotEmpty(t, builder.name)
			env := strings.Join(instructionArgs(builder.all("ENV")), " ")
			assert.Contains(t, strings.Fields(env), "CGO_ENABLED=0", "the binary must be static for the distroless image")
			checkFinalStage(t, final)

			binaries := map[string]string{}
			for _, built := range append([]string{pkg}, imageCommands[pkg]...) {
				t.Run(built, func(t *testing.T) {
					output := checkBuilt(t, builder, built)
					binaries[built] = copiedBinary(t, final, builder.name, output)
				})
			}
			entrypoints := final.all("ENTRYPOINT")
			require.Len(t, entrypoints, 1)
			var entrypoint []string
			require.NoError(t, json.Unmarshal([]byte(entrypoints[0].args), &entrypoint), "ENTRYPOINT in exec form")
			assert.Equal(t, []string{binaries[pkg]}, entrypoint)
			for _, extra := range imageCommands[pkg] {
				assert.Equal(t, extra, filepath.Base(binaries[extra]), "%s keeps its name in the image", extra)
				assert.Contains(t, distrolessPath, filepath.Dir(binaries[extra]), "%s is on the image's PATH, for kubectl exec", extra)
			}
		})
	}
}

// checkBuilt checks that the builder compiles ./pkg, with every directory it is
// compiled from copied in, and returns the binary's path in the builder.
func checkBuilt(t *testing.T, builder stage, pkg string) string {
	var build []string
	for _, run := range builder.all("RUN") {
		if fields := strings.Fields(run.args); len(fields) > 1 && fields[0] == "go" && fields[1] == "build" && fields[len(fields)-1] == "./"+pkg {
			build = fields
		}
	}
	require.NotEmpty(t, build, "no go build of ./%s in the builder", pkg)
	assert.Contains(t, build, "-trimpath")
	main, err := os.ReadFile(filepath.Join(repoRoot, pkg, "main.go"))
	require.NoError(t, err, "the built package exists")
	assert.Contains(t, string(main), "\npackage main\n")

	copied := map[string]bool{}
	for _, cp := range builder.all("COPY") {
		fields := strings.Fields(cp.args)
		for _, src := range fields[:len(fields)-1] {
			copied[strings.Trim(src, "./")] = true
		}
	}
	assert.True(t, copied["go.mod"] && copied["go.sum"], "go.mod and go.sum are copied")
	for _, dir := range moduleDirs(t, pkg) {
		assert.True(t, copied[dir], "%s is compiled into %s but not copied into the builder", dir, pkg)
	}
	out := slices.Index(build, "-o")
	require.True(t, out > 0 && out+1 < len(build), "go build names its output with -o")
	return build[out+1]
}

// copiedBinary is where the final stage puts the builder's output.
func copiedBinary(t *testing.T, final stage, builder, output string) string {
	for _, cp := range final.all("COPY") {
		fields := strings.Fields(cp.args)
		if len(fields) == 3 && fields[0] == "--from="+builder && fields[1] == output {
			return fields[2]
		}
	}
	require.Fail(t, "the final stage does not copy the binary", "%s from %s", output, builder)
	return ""
}

func checkFinalStage(t *testing.T, final stage) {
	assert.True(t, final.from == "scratch" ||
		(strings.HasPrefix(final.from, "gcr.io/distroless/static") && strings.HasSuffix(final.from, ":nonroot")),
		"final image %s is neither distroless static nonroot nor scratch", final.from)

	users := final.all("USER")
	require.NotEmpty(t, users, "the final stage sets USER")
	user, _, _ := strings.Cut(users[len(users)-1].args, ":")
	uid, err := strconv.Atoi(user)
	require.NoError(t, err, "USER %q must be numeric so that runAsNonRoot can verify it", user)
	assert.NotZero(t, uid, "USER must not be root")
}

func instructionArgs(ins []instruction) []string {
	out := make([]string, len(ins))
	for i, in := range ins {
		out[i] = in.args
	}
	return out
}
