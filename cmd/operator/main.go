// Command operator is nginx-operator: one binary that runs the controllers for
// NginxOperator, NginxMonitor and NginxBackup (and the Gateway controllers,
// which read NginxGatewayParameters and NginxExternalAuths), and prints its CRDs and version.
//
//	operator [run] [flags]   run the operator (the default)
//	operator backup [flags]  back up an instance (run by the NginxBackup Job)
//	operator restore [flags] restore a backup into a content directory
//	operator probe [flags]   ask a running operator's webhook to answer (helm test)
//	operator crds            print the CustomResourceDefinitions it serves
//	operator version         print the build version
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// dispatch runs the subcommand named by args[0], defaulting to run when the
// first argument is a flag or absent, and returns the exit code.
func dispatch(args []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		return run(args, stderr)
	case "backup", "restore":
		return agentCommand(cmd, args, stdout, stderr)
	case "probe":
		return probe(args, stdout, stderr)
	case "crds":
		return printCRDs(stdout, stderr)
	case "version":
		return printVersion(stdout)
	case "help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "unknown command %q\n\n", cmd)
		usage(stderr)
		return 2
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: operator <command> [flags]

Commands:
  run       run the operator (default; "operator run --help" lists its flags)
  backup    back up an instance's configuration and content (the backup Job's agent)
  restore   verify a backup and restore it into a content directory (the restore agent)
  probe     ask a running operator's conversion webhook to convert an object (the Helm chart's test)
  crds      print the CustomResourceDefinitions the operator serves, as YAML
  version   print the version
  help      print this help
`)
}
