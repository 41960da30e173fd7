package v1beta1

// MaxRoutingRoutes is how many routes status.routing lists by name.
const MaxRoutingRoutes = 100

// RoutingStatus is what the instance of a front (a Gateway) serves, which
// its spec does not hold: a Gateway's routes reach the operator's nginx
// controller in memory, too many for the CRD's bounds.
type RoutingStatus struct {
	// Routes counts the routes with locations or streams here.
	Routes int32 `json:"routes"`
	// Servers counts nginx's servers: one per listener port and hostname,
	// and the default server of each HTTP port.
	Servers int32 `json:"servers"`
	// Locations counts the servers' locations, the 404 of each included.
	Locations int32 `json:"locations"`
	// Streams counts the streams: TCP and UDP ports, TLS names.
	Streams int32 `json:"streams"`
	// ByRoute is what each route has here, by name, at most 100 of them
	// (the first by name): compare with routes for how many are left out.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	ByRoute []RouteRouting `json:"byRoute,omitempty"`
}

// RouteRouting is what one route has on the instance.
type RouteRouting struct {
	// Name is the route as kubectl names it: <resource>/<namespace>/<name>,
	// such as httproute/team-a/shop (its locations' route label in the
	// request metrics).
	// +kubebuilder:validation:MaxLength=330
	Name string `json:"name"`
	// Servers counts the servers the route has locations on.
	// +optional
	Servers int32 `json:"servers,omitempty"`
	// Locations counts its locations, on all of them.
	// +optional
	Locations int32 `json:"locations,omitempty"`
	// Streams counts its streams.
	// +optional
	Streams int32 `json:"streams,omitempty"`
}
