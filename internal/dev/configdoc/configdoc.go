// Package configdoc keeps docs/configuration.md in step with the binaries' flags: each
// binary's tests render its flag table and compare it with the section between the
// markers <!-- BEGIN <name> flags --> and <!-- END <name> flags -->.
package configdoc

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hcpsched/hcpsched/internal/process"
)

// UpdateEnv, set to 1, makes Check rewrite the section instead of comparing it.
const UpdateEnv = "HCPSCHED_UPDATE_DOCS"

// FromUsage reads the flags back from the usage text a FlagSet prints for -help
// (flag.PrintDefaults), for binaries that do not expose their FlagSet. A default that
// PrintDefaults leaves out is the type's zero value; for a type flag does not define
// (e.g. the log level) that value is taken from the same flag in shared, which may be nil.
func FromUsage(usage string, shared *flag.FlagSet) []process.FlagDoc {
	var docs []process.FlagDoc
	for _, line := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(line, "  -"):
			name, typ, _ := strings.Cut(strings.TrimPrefix(line, "  -"), " ")
			if typ == "" {
				typ = "bool"
			}
			def, known := zero(typ)
			if f := lookup(shared, name); !known && f != nil {
				def = f.DefValue
			}
			docs = append(docs, process.FlagDoc{Flag: "--" + name, Env: process.EnvName(name), Type: typ, Default: def})
		case strings.HasPrefix(line, "    \t") && len(docs) > 0:
			d := &docs[len(docs)-1]
			text := strings.TrimPrefix(line, "    \t")
			if i := strings.LastIndex(text, " (default "); i >= 0 && strings.HasSuffix(text, ")") {
				d.Default = text[i+len(" (default ") : len(text)-1]
				if s, err := strconv.Unquote(d.Default); err == nil {
					d.Default = s
				}
				text = text[:i]
			}
			if d.Usage != "" {
				text = d.Usage + "\n" + text
			}
			d.Usage = text
		}
	}
	return docs
}

// ProcessFlags are the process shell's flags as component defines them: the shared
// defaults for FromUsage.
func ProcessFlags(component string) *flag.FlagSet {
	fs := flag.NewFlagSet(component, flag.ContinueOnError)
	opts := process.NewOptions(component)
	opts.AddFlags(fs)
	return fs
}

func lookup(fs *flag.FlagSet, name string) *flag.Flag {
	if fs == nil {
		return nil
	}
	return fs.Lookup(name)
}

// zero is how flag prints the zero value of the types it names in usage.
func zero(typ string) (string, bool) {
	switch typ {
	case "bool":
		return "false", true
	case "duration":
		return "0s", true
	case "int", "uint", "float":
		return "0", true
	case "string":
		return "", true
	}
	return "", false
}

// hostIndependent replaces a default that is this machine's host name (the leader
// election identity) with a placeholder, so the document does not depend on where it
// was generated.
func hostIndependent(docs []process.FlagDoc) []process.FlagDoc {
	host, err := os.Hostname()
	out := slices.Clone(docs)
	for i := range out {
		if err == nil && host != "" && out[i].Default == host {
			out[i].Default = HostNamePlaceholder
		}
	}
	return out
}

// HostNamePlaceholder stands for the host name in a rendered default.
const HostNamePlaceholder = "<host name>"

// Table renders flags as a Markdown table.
func Table(docs []process.FlagDoc) string {
	var b strings.Builder
	b.WriteString("| Flag | Environment variable | Type | Default | Usage |\n|---|---|---|---|---|\n")
	for _, d := range docs {
		def := ""
		if d.Default != "" {
			def = "`" + d.Default + "`"
		}
		usage := strings.NewReplacer("|", `\|`, "\n", "<br>").Replace(d.Usage)
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s |\n", d.Flag, d.Env, d.Type, def, usage)
	}
	return b.String()
}

// Check compares the section called name of the Markdown file at path with the table of
// docs; with HCPSCHED_UPDATE_DOCS=1 it rewrites the section instead.
func Check(t testing.TB, path, name string, docs []process.FlagDoc) {
	t.Helper()
	begin, end := "<!-- BEGIN "+name+" flags -->\n", "<!-- END "+name+" flags -->"
	want := Table(hostIndependent(docs))
	if os.Getenv(UpdateEnv) == "1" {
		if err := update(path, begin, end, want); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := section(string(b), begin, end)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if got != want {
		t.Errorf("%s: the %s flags are out of date; run the test with %s=1 to rewrite them.\nwant:\n%s\ngot:\n%s", path, name, UpdateEnv, want, got)
	}
}

func section(doc, begin, end string) (string, error) {
	_, rest, ok := strings.Cut(doc, begin)
	if !ok {
		return "", fmt.Errorf("no %q marker", strings.TrimSpace(begin))
	}
	body, _, ok := strings.Cut(rest, end)
	if !ok {
		return "", fmt.Errorf("no %q marker", end)
	}
	return body, nil
}

// update rewrites one section of a generated document.
func update(path, begin, end, table string) error {
	return rewriteLocked(path, func(b []byte) ([]byte, error) {
		doc := string(b)
		old, err := section(doc, begin, end)
		if err != nil {
			return nil, err
		}
		return []byte(strings.Replace(doc, begin+old+end, begin+table+end, 1)), nil
	})
}

// rewriteLocked replaces the file's content with what rewrite makes of it, under an
// exclusive lock: the backend's and the fleet's tests run in parallel and rewrite the
// same generated files.
func rewriteLocked(path string, rewrite func([]byte) ([]byte, error)) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := rewrite(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(out, 0); err != nil {
		return err
	}
	return f.Close()
}
