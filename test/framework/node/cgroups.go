package node

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupMounts are the mount points of every cgroup hierarchy (v1 and v2).
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		for i, fld := range fields {
			if fld == "-" && i+1 < len(fields) {
				if fs := fields[i+1]; fs == "cgroup" || fs == "cgroup2" {
					mounts = append(mounts, fields[4])
				}
				break
			}
		}
	}
	return mounts, sc.Err()
}

// createCgroupRoot creates the cgroup /name in every hierarchy: the kubelet's
// cgroupRoot, under which it puts every pod (it insists that it exists).
func createCgroupRoot(name string) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	if len(mounts) == 0 {
		return errors.New("no cgroup hierarchy is mounted")
	}
	for _, m := range mounts {
		if err := os.Mkdir(filepath.Join(m, name), 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("creating cgroup %s: %w", filepath.Join(m, name), err)
		}
	}
	return nil
}

// removeCgroupRoot kills whatever still runs in the cgroup /name or below,
// in any hierarchy, and removes those cgroups, deepest first.
func removeCgroupRoot(name string, timeout time.Duration) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var errs []error
	for _, m := range mounts {
		root := filepath.Join(m, name)
		for {
			err := removeCgroupTree(root)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				errs = append(errs, err)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

func removeCgroupTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Deepest first.
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	var errs []error
	for _, d := range dirs {
		for _, pid := range cgroupPids(d) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if err := syscall.Rmdir(d); err != nil && err != syscall.ENOENT {
			errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

func cgroupPids(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
