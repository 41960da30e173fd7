// A kube-prometheus style composition: the operator itself, a
// ServiceMonitor that scrapes it, its monitoring mixin as a PrometheusRule, its dashboard as a ConfigMap for Grafana's
// dashboard sidecar, and an NginxMonitor for a team's nginx instances with
// its ServiceMonitor (and the Role kube-prometheus's Prometheus needs to
// discover them). It expects kube-prometheus's Prometheus, monitoring/prometheus-k8s.
//
// Render it with the jsonnet/ directory on the library path:
//   go tool jsonnet -J jsonnet jsonnet/examples/monitoring-stack.jsonnet > stack.json
//   kubectl apply -f stack.json
local namespace = 'nginx-operator';

local nginxOperator = (import 'nginx-operator/main.libsonnet').new({
  namespace: namespace,
  replicas: 2,
});

local mixin = (import 'nginx-operator/mixin/mixin.libsonnet') + {
  _config+:: {
    // The operator's metrics as the Prometheus of this stack scrapes them.
    nginxOperatorSelector: 'job="nginx-operator"',
    // Page later for backups that run hourly or more often.
    backupMaxAgeFactor: 3,
  },
};

local prometheusRule = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: {
    name: 'nginx-operator',
    namespace: namespace,
    labels: {
      'app.kubernetes.io/name': 'nginx-operator',
      'app.kubernetes.io/component': 'monitoring',
      // kube-prometheus's Prometheus selects rules by these labels.
      prometheus: 'k8s',
      role: 'alert-rules',
    },
  },
  spec: {
    groups: mixin.prometheusAlerts.groups + mixin.prometheusRules.groups,
  },
};

local dashboards = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'nginx-operator-dashboards',
    namespace: namespace,
    labels: {
      'app.kubernetes.io/name': 'nginx-operator',
      'app.kubernetes.io/component': 'monitoring',
      // Grafana's dashboard sidecar loads ConfigMaps with this label.
      grafana_dashboard: '1',
    },
  },
  data: {
    [name]: std.manifestJsonEx(mixin.grafanaDashboards[name], '  ')
    for name in std.objectFields(mixin.grafanaDashboards)
  },
};

// The operator's metrics Service, found by its port rather than by name so
// the example follows the library.
local metricsService = [
  o
  for o in nginxOperator.all
  if o.kind == 'Service' && std.length([p for p in o.spec.ports if p.name == 'https']) > 0
][0];

// Scrapes the operator. The job relabeling makes the job match the mixin's
// nginxOperatorSelector; honorLabels keeps the operator's own namespace/name
// labels (the custom resource's) instead of renaming them exported_namespace
// in favour of the namespace of the operator's pod.
local operatorServiceMonitor = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'ServiceMonitor',
  metadata: { name: 'nginx-operator', namespace: namespace, labels: metricsService.metadata.labels },
  spec: {
    selector: { matchLabels: metricsService.metadata.labels },
    endpoints: [{
      port: 'https',
      scheme: 'https',
      path: '/metrics',
      interval: '30s',
      honorLabels: true,
      relabelings: [{ targetLabel: 'job', replacement: 'nginx-operator', action: 'replace' }],
      // The operator authorizes scrapes by the scraper's ServiceAccount token
      // (see the metrics-reader binding below).
      bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      // The operator's serving certificate is self-signed unless it is
      // started with --metrics-cert-dir.
      tlsConfig: { insecureSkipVerify: true },
    }],
  },
};

// Lets kube-prometheus's Prometheus (monitoring/prometheus-k8s) read /metrics.
local metricsReaderBinding = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: 'nginx-operator-metrics-reader-prometheus-k8s' },
  roleRef: {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    name: [
      o.metadata.name
      for o in nginxOperator.all
      if o.kind == 'ClusterRole' && std.endsWith(o.metadata.name, '-metrics-reader')
    ][0],
  },
  subjects: [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }],
};

// Scrapes every NginxOperator labelled team: a in team-a, through a
// ServiceMonitor: kube-prometheus's Prometheus selects every ServiceMonitor
// in every namespace, but loads no additionalScrapeConfigs (and would read
// them from its own namespace, monitoring, not team-a). The ServiceMonitor's
// exporter targets get the job nginxmonitor/team-a/team-a, which the mixin's
// nginxSelector selects, and its reloader targets the job
// nginxmonitor/team-a/team-a/reloader, which nginxReloaderSelector selects.
local teamNamespace = 'team-a';
local teamMonitor = {
  apiVersion: 'nginx.operator.dev/v1beta1',
  kind: 'NginxMonitor',
  metadata: { name: 'team-a', namespace: teamNamespace },
  spec: {
    selector: { matchLabels: { team: 'a' } },
    endpoint: { interval: '30s', path: '/metrics' },
    serviceMonitor: { enabled: true },
  },
};

// kube-prometheus grants its Prometheus service discovery only in the
// namespaces it lists (default, kube-system, monitoring): this Role lets it
// discover the team's nginx endpoints.
local teamDiscoveryRole = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name: 'prometheus-k8s', namespace: teamNamespace },
  rules: [
    { apiGroups: [''], resources: ['services', 'endpoints', 'pods'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
  ],
};

local teamDiscoveryBinding = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name: 'prometheus-k8s', namespace: teamNamespace },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: teamDiscoveryRole.metadata.name },
  subjects: [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }],
};

local teamNamespaceObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: teamNamespace } };

{
  apiVersion: 'v1',
  kind: 'List',
  items: nginxOperator.all + [
    operatorServiceMonitor,
    metricsReaderBinding,
    prometheusRule,
    dashboards,
    teamNamespaceObject,
    teamDiscoveryRole,
    teamDiscoveryBinding,
    teamMonitor,
  ],
}
