package node

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// ownerFile, in a node's run directory, names the process that runs the
// node: its pid and start time (so a reused pid is not mistaken for it).
const ownerFile = "owner"

var runDirName = regexp.MustCompile(`^nok[0-9a-f]{8}$`)

// processIdentity is "pid starttime" of a live process, or "" if none.
func processIdentity(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The fields after the command name, which is in parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return fmt.Sprintf("%d %s", pid, f[19]) // starttime is field 22 of stat
}

func writeOwner(runDir string) error {
	return os.WriteFile(filepath.Join(runDir, ownerFile), []byte(processIdentity(os.Getpid())+"\n"), 0o600)
}

// sweepStale removes what nodes of dead processes left behind (a test
// binary killed with SIGKILL takes the node's processes and namespaces with
// it, but not its cgroups and run directory).
func sweepStale() {
	entries, err := os.ReadDir("/run")
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !runDirName.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join("/run", e.Name())
		owner, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			// Being created, or not ours.
			continue
		}
		var pid int
		if _, err := fmt.Sscan(string(owner), &pid); err != nil {
			continue
		}
		if processIdentity(pid) == strings.TrimSpace(string(owner)) {
			continue // alive
		}
		if removeCgroupRoot(e.Name(), 5*time.Second) == nil {
			_ = os.RemoveAll(dir)
		}
	}
}
