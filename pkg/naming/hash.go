package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Hash is a stable, hex-encoded SHA-256 of v's JSON encoding. encoding/json
// sorts map keys, so equal values hash equally across processes and restarts;
// it is what pod-template config hashes and name suffixes are made of.
func Hash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only values JSON cannot encode (channels, functions) get here: a
		// programming error, never user input, which is always JSON-decoded.
		panic(fmt.Sprintf("naming.Hash: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
