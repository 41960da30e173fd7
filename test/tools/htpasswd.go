package tools

import (
	"crypto/sha1" //nolint:gosec // htpasswd's {SHA} scheme, which nginx reads; test passwords only.
	"encoding/base64"
)

// Htpasswd is an htpasswd file with one user, its password in the {SHA}
// scheme that `htpasswd -s` writes and nginx's auth_basic reads on any
// platform (crypt(3)'s schemes vary with the libc).
func Htpasswd(user, password string) string {
	sum := sha1.Sum([]byte(password))
	return user + ":{SHA}" + base64.StdEncoding.EncodeToString(sum[:]) + "\n"
}
