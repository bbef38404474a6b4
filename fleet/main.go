// Command fleet keeps the per-management-cluster scheduling data of hcpsched current.
//
//	fleet controller [flags]   run the fleet controllers (registration with Cluster
//	                           Service, lifecycle, capacity mirroring, scale ceilings)
//	fleet register [flags]     create or update a stamp and its management cluster
//
// Every flag can also be set through its environment variable, HCPSCHED_<FLAG_NAME>
// (--cosmos-endpoint is HCPSCHED_COSMOS_ENDPOINT); the command line wins.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hcpsched/hcpsched/internal/process"
)

const usage = `usage: fleet <command> [flags]

commands:
  controller   run the fleet controllers
  register     create or update a stamp and its management cluster

Run "fleet <command> -h" for the command's flags.
`

func main() {
	process.TuneGC()
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "controller":
		return runController(ctx, args[1:], stderr)
	case "register":
		return runRegister(ctx, args[1:], stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}
