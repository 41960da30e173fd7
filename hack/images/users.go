package main

import (
	"fmt"
	"strings"
)

// Account is one user and its primary group of the same name and number.
// Images here hold no shell, so every login shell is nologin's path: it
// exists in none of them, which makes a login fail as it should.
type Account struct {
	Name string
	ID   int
	Home string
	// Group names the primary group when it differs from Name (Debian's
	// nobody belongs to nogroup).
	Group string
}

func (a Account) group() string {
	if a.Group != "" {
		return a.Group
	}
	return a.Name
}

var (
	rootAccount   = Account{Name: "root", ID: 0, Home: "/root"}
	nobodyAccount = Account{Name: "nobody", ID: 65534, Home: "/nonexistent", Group: "nogroup"}
)

// accountFiles returns /etc/passwd and /etc/group for accounts. Programs
// and the kubelet work with numeric IDs; the files are there so that tools
// (and nginx's "user" directive in the default configuration) can resolve
// names as they do on the images these replace.
func accountFiles(accounts ...Account) []Entry {
	var passwd, group strings.Builder
	for _, a := range accounts {
		fmt.Fprintf(&passwd, "%s:x:%d:%d:%s:%s:/sbin/nologin\n", a.Name, a.ID, a.ID, a.Name, a.Home)
		fmt.Fprintf(&group, "%s:x:%d:\n", a.group(), a.ID)
	}
	return []Entry{
		FileEntry("/etc/passwd", 0o644, []byte(passwd.String())),
		FileEntry("/etc/group", 0o644, []byte(group.String())),
	}
}

// nsswitch makes glibc programs (nginx, the exporter) and Go's resolver look
// names up in /etc/hosts before DNS, as on Debian and distroless, instead of
// their built-in defaults that ask DNS first.
func nsswitch() Entry {
	return FileEntry("/etc/nsswitch.conf", 0o644, []byte(
		"passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n"))
}
