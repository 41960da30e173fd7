package render

import (
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// The kinds of limit, which prefix the names of a limit's zone and
// variables: rate_s0_l2 is the rate limit zone of location 2 of server 0.
const (
	rateKind = "rate"
	connKind = "conn"
)

// limitZones declares, at the http level, the zones of the guards of the
// server or location id and the variables their keys need.
func limitZones(id string, g guards) []conf.Directive {
	var out []conf.Directive
	if l := g.rate; l != nil {
		key, blocks := limitKey(rateKind, id, l.Key, l.Exempt)
		rate := itoa(l.RequestsPerSecond) + "r/s"
		if l.RequestsPerMinute > 0 {
			rate = itoa(l.RequestsPerMinute) + "r/m"
		}
		out = append(append(out, blocks...), conf.D("limit_req_zone", key, zoneArg(rateKind, id, l.ZoneSizeMiB), "rate="+rate))
	}
	if l := g.conn; l != nil {
		key, blocks := limitKey(connKind, id, l.Key, l.Exempt)
		out = append(append(out, blocks...), conf.D("limit_conn_zone", key, zoneArg(connKind, id, l.ZoneSizeMiB)))
	}
	return out
}

// limits applies the guards' zones (limitZones). A rate limit's nodelay
// serves a burst at once rather than spacing it out. What exceeds a limit
// gets 429 instead of nginx's default 503, which clients would take for an
// outage.
func limits(id string, g guards) []conf.Directive {
	var out []conf.Directive
	if l := g.rate; l != nil {
		args := []string{"zone=" + zoneName(rateKind, id)}
		if l.Burst > 0 {
			args = append(args, "burst="+itoa(l.Burst))
		}
		out = append(out, conf.D("limit_req", append(args, "nodelay")...), conf.D("limit_req_status", "429"))
	}
	if l := g.conn; l != nil {
		out = append(out, conf.D("limit_conn", zoneName(connKind, id), itoa(l.Connections)), conf.D("limit_conn_status", "429"))
	}
	return out
}

func zoneName(kind, id string) string { return kind + "_" + id }

func zoneArg(kind, id string, mib int32) string {
	return "zone=" + zoneName(kind, id) + ":" + itoa(mib) + "m"
}

// limitKey is the variable a limit's zone counts requests by, and the
// http-level blocks that define it. nginx counts nothing for an empty key,
// which is how exempt requests pass. Without a key the client's address
// counts, in binary (4 or 16 bytes). With a header or cookie its value
// counts, prefixed with "k", and a request without it by its address,
// prefixed with "a": no value a client sends can take another client's
// count.
func limitKey(kind, id string, key *v1beta1.RequestKey, exempt *v1beta1.LimitExemptions) (string, []conf.Directive) {
	const byAddress = "$binary_remote_addr"
	value := byAddress
	var out []conf.Directive
	if key != nil && key.Source != "ClientIP" {
		part, blocks := partVariable(kind+"_"+id, key.Source, key.Name)
		value = "$" + kind + "_value_" + id
		entries := []conf.Directive{conf.D("default", "k"+part), conf.D("", "a"+byAddress)}
		if exempt != nil {
			for _, k := range exempt.Keys {
				entries = append(entries, conf.D("~"+literalMatch(k), ""))
			}
		}
		out = append(blocks, conf.B("map", []string{part, value}, entries...))
	}
	if exempt == nil || len(exempt.Clients) == 0 {
		return value, out
	}
	// geo reads $remote_addr, the client's address as realIP finds it.
	exemptClient := "$" + kind + "_exempt_" + id
	geo := []conf.Directive{conf.D("default", "0")}
	for _, cidr := range exempt.Clients {
		geo = append(geo, conf.D(cidr, "1"))
	}
	counted := "$" + kind + "_key_" + id
	return counted, append(out,
		conf.B("geo", []string{exemptClient}, geo...),
		conf.B("map", []string{exemptClient, counted}, conf.D("default", value), conf.D("1", "")),
	)
}
