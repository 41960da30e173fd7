// Rewrites of a request's URL: a proxy location's URLRewrite, and the
// PathModifier it shares with redirect locations.

package v1beta1

// URLRewrite changes the request before it is proxied.
// +kubebuilder:validation:XValidation:rule="has(self.hostname) || has(self.path)",message="set hostname, path or both"
type URLRewrite struct {
	// Hostname replaces the Host header sent to the Service.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Hostname string `json:"hostname,omitempty"`
	// Path rewrites the path; the query is kept.
	// +optional
	Path *PathModifier `json:"path,omitempty"`
}

// PathModifier replaces a request's path, with Gateway API's semantics.
// +kubebuilder:validation:XValidation:rule="self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) && !has(self.replacePrefixMatch) : has(self.replacePrefixMatch) && !has(self.replaceFullPath)",message="type ReplaceFullPath needs replaceFullPath, type ReplacePrefixMatch needs replacePrefixMatch, and only that one"
type PathModifier struct {
	// Type is ReplaceFullPath or ReplacePrefixMatch.
	// +kubebuilder:validation:Enum=ReplaceFullPath;ReplacePrefixMatch
	Type string `json:"type"`
	// ReplaceFullPath is the whole new path.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._~!&'()*+,=:@%/-]*$`
	ReplaceFullPath *string `json:"replaceFullPath,omitempty"`
	// ReplacePrefixMatch replaces the location's path at the start of the
	// request's path and keeps the rest: with path /api/ and "/v2/",
	// /api/users becomes /v2/users; "" or "/" strip the prefix. A trailing
	// '/' on either side is ignored, as in Gateway API.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^(/[A-Za-z0-9._~!&'()*+,=:@%/-]*)?$`
	ReplacePrefixMatch *string `json:"replacePrefixMatch,omitempty"`
}
