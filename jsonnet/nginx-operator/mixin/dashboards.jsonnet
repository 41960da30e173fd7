// Renders every dashboard of the mixin into its own file:
//   go tool jsonnet -m dashboards_out jsonnet/nginx-operator/mixin/dashboards.jsonnet
(import 'mixin.libsonnet').grafanaDashboards
