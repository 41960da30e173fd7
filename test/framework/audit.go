package framework

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// auditPolicy logs the metadata of every request of the audited users and
// nothing else; the request's stage "ResponseComplete" carries its outcome.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  users: %s
- level: None
`

// AuditLog is the apiserver's audit log, when Options.AuditUsers is set.
func (c *Cluster) AuditLog() string { return filepath.Join(c.Dir, "audit.log") }

func (c *Cluster) auditArgs() ([]string, error) {
	if len(c.AuditUsers) == 0 {
		return nil, nil
	}
	users, err := json.Marshal(c.AuditUsers)
	if err != nil {
		return nil, err
	}
	policy := filepath.Join(c.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, fmt.Appendf(nil, auditPolicy, users), 0o600); err != nil {
		return nil, err
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + c.AuditLog(), "--audit-log-maxsize=0", "--audit-log-mode=blocking"}, nil
}

// Permission is one RBAC verb on one resource ("pods", "nginxbackups/status")
// of one API group ("" for the core group).
type Permission struct {
	Group, Resource, Verb string
}

func (p Permission) String() string {
	g := p.Group
	if g == "" {
		g = "core"
	}
	return p.Verb + " " + g + "/" + p.Resource
}

// UsedPermissions reads an audit log and returns the permissions the
// requests of user needed and got (requests refused with 403 are left out).
// A server-side apply or update that created its object (201) needed
// "create" besides its own verb, and a streamed initial list (a watch with
// sendInitialEvents) stands for "list".
func UsedPermissions(auditLog, user string) (map[Permission]bool, error) {
	f, err := os.Open(auditLog)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	used := map[Permission]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var ev struct {
			Verb       string `json:"verb"`
			RequestURI string `json:"requestURI"`
			User       struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				APIGroup    string `json:"apiGroup"`
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
			ResponseStatus *struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("%s: %w", auditLog, err)
		}
		if ev.User.Username != user || ev.ObjectRef == nil || ev.ResponseStatus == nil || ev.ResponseStatus.Code == 403 {
			continue
		}
		resource := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			resource += "/" + ev.ObjectRef.Subresource
		}
		used[Permission{Group: ev.ObjectRef.APIGroup, Resource: resource, Verb: ev.Verb}] = true
		if ev.ResponseStatus.Code == 201 && (ev.Verb == "patch" || ev.Verb == "update") {
			used[Permission{Group: ev.ObjectRef.APIGroup, Resource: resource, Verb: "create"}] = true
		}
		if ev.Verb == "watch" && strings.Contains(ev.RequestURI, "sendInitialEvents=true") {
			// An informer's initial list, streamed as a watch; client-go
			// falls back to a plain list when the server cannot stream.
			used[Permission{Group: ev.ObjectRef.APIGroup, Resource: resource, Verb: "list"}] = true
		}
	}
	return used, sc.Err()
}

// ServiceAccountUser is the user name a ServiceAccount authenticates as.
func ServiceAccountUser(namespace, name string) string {
	return strings.Join([]string{"system", "serviceaccount", namespace, name}, ":")
}
