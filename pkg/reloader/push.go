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
	"io"
	"net/http"
	"os"
	"slices"

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

// push is one pushed configuration, waiting for the Run loop.
type push struct {
	config []byte
	done   chan Status
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
	for _, p := range batch {
		r.pushed = append(r.pushed, ConfigHash(p.config))
	}
	config := batch[len(batch)-1].config
	if len(r.pushed) > pushHistory {
		r.pushed = slices.Delete(r.pushed, 0, len(r.pushed)-pushHistory)
	}
	r.writeWork(config)
	return batch
}

// followVolume copies the mounted nginx.conf to the working copy when the
// volume shows a configuration it did not show before, unless that is one
// pushed before the last push: the kubelet catching up with pushes already
// served, which must not take nginx back. (A configuration never pushed is
// followed: the operator wrote it while this pod was out of its reach.)
func (r *Reloader) followVolume() {
	mounted, err := os.ReadFile(r.opts.Config)
	if err != nil {
		return
	}
	hash := ConfigHash(mounted)
	if hash == r.volumeHash {
		return
	}
	r.volumeHash = hash
	if i := slices.Index(r.pushed, hash); i >= 0 && i < len(r.pushed)-1 {
		r.opts.Logf("the volume shows configuration %s, pushed before the one served: ignored", hash)
		return
	}
	r.writeWork(mounted)
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
