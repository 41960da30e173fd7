// HTTP headers that locations add to, set on or remove from requests and
// responses.

package v1beta1

// HeaderModifier sets, adds and removes HTTP headers, with Gateway API's
// semantics: set replaces every value of the header, add appends one, remove
// drops it. Header names are case-insensitive; each may appear once in a
// modifier, which the controller checks (condition Degraded, reason
// InvalidConfig): a schema rule comparing every pair of names would exceed
// the apiserver's CEL budget.
// +kubebuilder:validation:XValidation:rule="(has(self.set) ? self.set.map(h, h.name) : []).all(n, !(n.lowerAscii() in ['host', 'connection', 'upgrade', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'content-length'])) && (has(self.add) ? self.add.map(h, h.name) : []).all(n, !(n.lowerAscii() in ['host', 'connection', 'upgrade', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'content-length'])) && (has(self.remove) ? self.remove : []).all(n, !(n.lowerAscii() in ['host', 'connection', 'upgrade', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'content-length']))",message="Host, Connection, Upgrade, Keep-Alive, TE, Trailer, Transfer-Encoding and Content-Length are nginx's to manage: change the host with proxy.urlRewrite.hostname"
type HeaderModifier struct {
	// Set replaces the header's values with this one, or adds it.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Set []Header `json:"set,omitempty"`
	// Add appends this value to the header, or adds it. In requestHeaders
	// the names may hold letters, digits and '-' only: nginx reads the
	// existing value through a variable named after the header.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Add []Header `json:"add,omitempty"`
	// Remove drops these headers.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9!#%&'*+.^_|~-]+$`
	Remove []string `json:"remove,omitempty"`
}

// Header is one response header.
type Header struct {
	// Name of the header.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#%&'*+.^_|~-]+$`
	Name string `json:"name"`
	// Value of the header; printable characters only, no "$" (nginx variables are not expanded from user input).
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[^\x00-\x1f\x7f$]*$`
	Value string `json:"value"`
}
