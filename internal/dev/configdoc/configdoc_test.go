package configdoc

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/process"
)

func testFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.String("name", "a b", "The name")
	fs.String("empty", "", "Empty by default;\nsecond line")
	fs.Bool("on", true, "Switched on")
	fs.Bool("off", false, "Switched off")
	fs.Duration("every", 5*time.Minute, "How often")
	fs.Duration("never", 0, "Not at all")
	fs.Int("workers", 3, "Workers | per controller")
	fs.String("file", "", "Read `path` instead")
	return fs
}

// The usage text a FlagSet prints reads back as what process.Describe reports.
func TestFromUsageMatchesDescribe(t *testing.T) {
	fs := testFlagSet()
	var out bytes.Buffer
	fs.SetOutput(&out)
	require.ErrorIs(t, fs.Parse([]string{"-help"}), flag.ErrHelp)
	assert.Equal(t, process.Describe(testFlagSet()), FromUsage(out.String(), nil))
}

// A default of a type flag does not know is taken from the shared flags.
func TestFromUsageSharedDefaults(t *testing.T) {
	shared := ProcessFlags("x")
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	opts := process.NewOptions("x")
	opts.AddFlags(fs)
	var out bytes.Buffer
	fs.SetOutput(&out)
	require.ErrorIs(t, fs.Parse([]string{"-help"}), flag.ErrHelp)
	assert.Equal(t, process.Describe(fs), FromUsage(out.String(), shared))
}

func TestHostIndependent(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	docs := []process.FlagDoc{{Flag: "--id", Default: host}, {Flag: "--other", Default: "x"}}
	got := hostIndependent(docs)
	assert.Equal(t, HostNamePlaceholder, got[0].Default)
	assert.Equal(t, "x", got[1].Default)
	assert.Equal(t, host, docs[0].Default, "the input is not changed")
}

func TestTable(t *testing.T) {
	got := Table([]process.FlagDoc{{Flag: "--a", Env: "HCPSCHED_A", Type: "int", Default: "3", Usage: "x | y\nz"}, {Flag: "--b", Env: "HCPSCHED_B", Type: "string"}})
	assert.Equal(t, "| Flag | Environment variable | Type | Default | Usage |\n|---|---|---|---|---|\n"+
		"| `--a` | `HCPSCHED_A` | int | `3` | x \\| y<br>z |\n"+
		"| `--b` | `HCPSCHED_B` | string |  |  |\n", got)
}

// With HCPSCHED_UPDATE_DOCS=1 the section is rewritten, the rest of the file kept; the
// comparison then passes.
func TestCheckUpdatesThenMatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "configuration.md")
	require.NoError(t, os.WriteFile(path, []byte("intro\n<!-- BEGIN x flags -->\nstale\n<!-- END x flags -->\noutro\n"), 0o600))
	docs := process.Describe(testFlagSet())

	t.Setenv(UpdateEnv, "1")
	Check(t, path, "x", docs)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "intro\n<!-- BEGIN x flags -->\n"+Table(docs)+"<!-- END x flags -->\noutro\n", string(b))

	t.Setenv(UpdateEnv, "")
	Check(t, path, "x", docs)
	s, err := section(string(b), "<!-- BEGIN x flags -->\n", "<!-- END x flags -->")
	require.NoError(t, err)
	assert.Equal(t, Table(docs), s)
	_, err = section("nothing", "<!-- BEGIN x flags -->\n", "<!-- END x flags -->")
	assert.Error(t, err)
}
