// Renders the mixin's alerts as a Prometheus rule file:
//   go tool jsonnet -S jsonnet/nginx-operator/mixin/alerts.jsonnet > alerts.yaml
std.manifestYamlDoc((import 'mixin.libsonnet').prometheusAlerts)
