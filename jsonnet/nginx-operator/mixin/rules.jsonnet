// Renders the mixin's recording rules as a Prometheus rule file:
//   go tool jsonnet -S jsonnet/nginx-operator/mixin/rules.jsonnet > rules.yaml
std.manifestYamlDoc((import 'mixin.libsonnet').prometheusRules)
