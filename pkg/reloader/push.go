package reloader

// Pushed configurations: the operator PUTs each new nginx.conf to the
// pod's reloader as soon as it has written the config Secret, rather than
// wait for the kubelet, which refreshes a pod's Secret volume only when its
// pod worker next syncs, up to a second later (its pod lifecycle event
// generator relists once a second). The mounted Secret stays the source a
// pod starts from and the one it follows when no push comes: nginx runs
// from a working copy (Options.Work) that either writes.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nginx-operator/nginx-operator/pkg/fsutil"
)

const (
	// ConfigPath is where the operator PUTs a new nginx.conf.
	ConfigPath = "/config"
	// SignatureHeader carries Sign's signature of the pushed body: only
	// who holds the instance's push key (the operator, which wrote it into
	// the config Secret) can push. The key itself never crosses the
	// network, so a captured push cannot be turned into another one.
	SignatureHeader = "X-Nginx-Operator-Signature"
	// RevisionHeader carries the pushed configuration's revision (see
	// RevisionFile), RevisionSignatureHeader SignRevision's signature of
	// it: a push without them is ordered by its arrival alone, as before
	// there were revisions.
	RevisionHeader          = "X-Nginx-Operator-Revision"
	RevisionSignatureHeader = "X-Nginx-Operator-Revision-Signature"
	// RevisionFile is the config Secret's key, beside nginx.conf, holding
	// the configuration's revision: a decimal number the operator raises
	// with every new configuration of the instance. The kubelet may show
	// a pod an older Secret after a newer configuration was pushed (its
	// copy lags the apiserver); the revision tells the reloader so, where
	// a configuration's hash cannot.
	RevisionFile = "revision"
	// maxRevisionLength bounds the revision's digits (a uint64's);
	// layout.MaxConfigSize leaves room for them.
	maxRevisionLength = 20
	// MaxPushedConfig bounds a pushed body: a Secret carries 1 MiB.
	MaxPushedConfig = 1 << 20
	// pushHistory is how many pushed configurations the reloader remembers
	// to tell a late volume update from a new configuration.
	pushHistory = 16
)

// Sign is the signature of a pushed configuration under key.
func Sign(key, config []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(config)
	return hex.EncodeToString(mac.Sum(nil))
}

// SignRevision is the signature of revision as that of the pushed config,
// under key: a revision cannot be moved to another configuration, nor
// raised to make a pod ignore the configurations that follow.
func SignRevision(key []byte, revision uint64, config []byte) string {
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%d\n", revision)
	mac.Write(config)
	return hex.EncodeToString(mac.Sum(nil))
}

// push is one pushed configuration, waiting for the Run loop; revision is
// 0 for a push that carries none.
type push struct {
	config   []byte
	revision uint64
	done     chan Status
}

// ServeConfig takes a pushed nginx.conf (PUT ConfigPath), hands it to Run,
// which checks and loads it, and answers with the Status after that
// attempt: a configuration nginx refused is a 200 whose status says so,
// as for one the volume brought. 404 when the reloader runs nginx from the
// mounted file (no Options.Work), 403 without the key or with a wrong
// signature, 413 above MaxPushedConfig.
func (r *Reloader) ServeConfig(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPut {
		w.Header().Set("Allow", http.MethodPut)
		http.Error(w, "PUT a configuration", http.StatusMethodNotAllowed)
		return
	}
	if r.opts.Work == "" {
		http.Error(w, "this reloader runs nginx from the mounted configuration only", http.StatusNotFound)
		return
	}
	key, err := os.ReadFile(r.opts.PushKey)
	if err != nil || len(bytes.TrimSpace(key)) == 0 {
		http.Error(w, "no push key is mounted: pushes are refused", http.StatusForbidden)
		return
	}
	// One body is read at a time: the operator pushes one configuration
	// to a pod at a time, and whoever else reaches the port cannot make
	// the reloader hold many.
	select {
	case r.reading <- struct{}{}:
		defer func() { <-r.reading }()
	case <-req.Context().Done():
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, MaxPushedConfig))
	if err != nil {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	if !hmac.Equal([]byte(req.Header.Get(SignatureHeader)), []byte(Sign(bytes.TrimSpace(key), body))) {
		http.Error(w, "the signature does not match the body under this pod's push key", http.StatusForbidden)
		return
	}
	p := push{config: body, done: make(chan Status, 1)}
	if h := req.Header.Get(RevisionHeader); h != "" {
		revision, err := strconv.ParseUint(h, 10, 64)
		if err != nil || revision == 0 ||
			!hmac.Equal([]byte(req.Header.Get(RevisionSignatureHeader)), []byte(SignRevision(bytes.TrimSpace(key), revision, body))) {
			http.Error(w, "the revision is not a positive number signed with the body under this pod's push key", http.StatusForbidden)
			return
		}
		p.revision = revision
	}
	select {
	case r.pushes <- p:
	case <-req.Context().Done():
		return
	}
	select {
	case st := <-p.done:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	case <-req.Context().Done():
	}
}

// takePushes writes the last of first and the pushes queued behind it to
// the working copy, and returns them all to be answered after the reload.
// A push whose revision is not above the one served (a delayed or replayed
// push) is answered without being written.
func (r *Reloader) takePushes(first push) []push {
	batch := []push{first}
	for more := true; more; {
		select {
		case p := <-r.pushes:
			batch = append(batch, p)
		default:
			more = false
		}
	}
	r.mu.Lock()
	r.pushCount += len(batch)
	r.mu.Unlock()
	var config []byte
	for _, p := range batch {
		if p.revision != 0 {
			if p.revision <= r.revision {
				r.opts.Logf("a pushed configuration of revision %d, not above the %d served: ignored", p.revision, r.revision)
				continue
			}
			r.revision = p.revision
		}
		r.pushed = append(r.pushed, ConfigHash(p.config))
		config = p.config
	}
	if len(r.pushed) > pushHistory {
		r.pushed = slices.Delete(r.pushed, 0, len(r.pushed)-pushHistory)
	}
	if config != nil {
		r.writeWork(config)
	}
	return batch
}

// followVolume copies the mounted nginx.conf to the working copy when the
// volume shows a configuration it did not show before, unless that is
// older than the one served: the kubelet catching up with pushes, which
// must not take nginx back (and forth again: each reload drops the UDP
// answers in flight). A revision beside the configuration orders it; the
// volume's configuration is followed only when its revision is above the
// one served. Without a revision (a Secret written before there were
// any), a configuration pushed before the last push is older, and one
// never pushed is followed: the operator wrote it while this pod was out
// of its reach.
func (r *Reloader) followVolume() {
	revision, hasRevision, ok := r.volumeRevision()
	mounted, err := os.ReadFile(r.opts.Config)
	if again, _, sameAgain := r.volumeRevision(); err != nil || !ok || !sameAgain || again != revision {
		// Unreadable, or the kubelet swapped the volume between the two
		// reads: the next look sees it whole.
		return
	}
	hash := ConfigHash(mounted)
	if hash == r.volumeHash {
		return
	}
	r.volumeHash = hash
	if hasRevision {
		if revision <= r.revision {
			r.opts.Logf("the volume shows configuration %s of revision %d, not above the %d served: ignored", hash, revision, r.revision)
			return
		}
		r.revision = revision
		r.writeWork(mounted)
		return
	}
	if i := slices.Index(r.pushed, hash); i >= 0 && i < len(r.pushed)-1 {
		r.opts.Logf("the volume shows configuration %s, pushed before the one served: ignored", hash)
		return
	}
	r.writeWork(mounted)
}

// volumeRevision reads RevisionFile beside the mounted nginx.conf: has is
// false when there is none; ok is false when it cannot be read or is no
// revision (the configuration beside it is then not followed).
func (r *Reloader) volumeRevision() (revision uint64, has, ok bool) {
	b, err := os.ReadFile(r.revisionPath())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, false, true
	case err != nil || len(b) > maxRevisionLength+1:
		return 0, true, false
	}
	revision, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		r.opts.Logf("the volume's %s is no revision: %q", RevisionFile, b)
		return 0, true, false
	}
	return revision, true, true
}

// revisionPath is RevisionFile beside the mounted nginx.conf.
func (r *Reloader) revisionPath() string {
	return filepath.Join(filepath.Dir(r.opts.Config), RevisionFile)
}

// writeWork replaces the working copy with config, unless it holds it.
func (r *Reloader) writeWork(config []byte) {
	if current, err := os.ReadFile(r.opts.Work); err == nil && bytes.Equal(current, config) {
		return
	}
	if err := fsutil.WriteFile(r.opts.Work, config, 0o644); err != nil {
		r.opts.Logf("writing the working configuration: %v", err)
	}
}

// answer tells every push of batch the status after its attempt.
func (r *Reloader) answer(batch []push) {
	st := r.Status()
	for _, p := range batch {
		p.done <- st
	}
}
