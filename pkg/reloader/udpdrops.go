package reloader

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// udpDrops is the count of datagrams the kernel dropped for the loopback
// UDP socket bound to port, from /proc/net/udp (its last column, "drops");
// false where there is none (not Linux, no such socket).
func udpDrops(port int) (uint64, bool) {
	if port == 0 {
		return 0, false
	}
	f, err := os.Open("/proc/net/udp")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	// local_address is hex IPv4:port; 0100007F is 127.0.0.1.
	local := fmt.Sprintf("0100007F:%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 13 || fields[1] != local {
			continue
		}
		drops, err := strconv.ParseUint(fields[len(fields)-1], 10, 64)
		return drops, err == nil
	}
	return 0, false
}
