// nginx-operator's install as jsonnet: the objects of bundle.yaml, with the
// parameters users change most often.
//
//   local nginxOperator = (import 'nginx-operator/main.libsonnet').new({
//     namespace: 'ops',
//     namespaces: ['team-a', 'team-b'],
//   });
//   nginxOperator.all   // a list, in bundle.yaml's order
//
// With the defaults, .all equals bundle.yaml object by object (a Go test in
// this directory checks that). The CRDs and the RBAC rules are not written
// here: "make bundle" generates crds.json and rbac.json from config/, so the
// library cannot drift from the operator it installs.

local crdList = import 'crds.json';
local rbac = import 'rbac.json';

// The GatewayClass controllerName the operator serves (pkg/gateway).
local gatewayController = 'nginx.operator.dev/gateway-controller';

local defaults = {
  // Namespace the operator runs in; created by the library.
  namespace: 'nginx-operator',
  // Operator image repository and tag.
  image: 'ghcr.io/nginx-operator/nginx-operator',
  version: 'v0.1.0',
  // Replicas of the operator; leader election keeps one of them active.
  replicas: 2,
  // Namespaces to watch. Empty: all namespaces, with a ClusterRole. Otherwise
  // the operator gets --namespaces and Roles in those namespaces (and its
  // own), and its ClusterRole keeps only what is cluster-scoped, as
  // config/namespaced does.
  namespaces: [],
  // The operator container's resources.
  resources: {
    requests: { cpu: '50m', memory: '64Mi' },
    limits: { memory: '256Mi' },
  },
};

{
  new(params):: {
    local p = defaults + params,
    local name = 'nginx-operator',
    local nameLabel = { 'app.kubernetes.io/name': name },
    local podLabels = nameLabel { 'app.kubernetes.io/component': 'controller' },
    local namespaced = std.length(p.namespaces) > 0,
    local saSubject = { kind: 'ServiceAccount', name: name, namespace: p.namespace },

    namespace: {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: p.namespace,
        labels: nameLabel { 'pod-security.kubernetes.io/enforce': 'restricted' },
      },
    },

    // Keyed by plural name. The apiserver reaches the conversion webhook
    // through the Service in the operator's namespace, so a CRD that names a
    // webhook Service is pointed at p.namespace.
    crds: {
      [crd.spec.names.plural]: crd + (
        if std.objectHas(std.get(std.get(std.get(crd.spec, 'conversion', {}), 'webhook', {}), 'clientConfig', {}), 'service') then {
          spec+: { conversion+: { webhook+: { clientConfig+: { service+: { namespace: p.namespace } } } } },
        } else {}
      )
      for crd in crdList
    },

    serviceAccount: {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: name, namespace: p.namespace, labels: nameLabel },
    },

    clusterRole: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: rbac.name },
      rules: if namespaced then rbac.clusterRules else rbac.rules,
    },

    metricsReaderClusterRole: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: name + '-metrics-reader', labels: nameLabel },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    },

    clusterRoleBinding: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: name, labels: nameLabel },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: rbac.name },
      subjects: [saSubject],
    },

    // Only when p.namespaces is set: a Role and RoleBinding per watched
    // namespace, and in the operator's own (Lease, webhook certificate,
    // Events), keyed by namespace.
    local roleNamespaces = std.set(p.namespaces + [p.namespace]),
    roles: if namespaced then {
      [ns]: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: rbac.name, namespace: ns, labels: nameLabel },
        rules: rbac.namespacedRules,
      }
      for ns in roleNamespaces
    } else {},
    roleBindings: if namespaced then {
      [ns]: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: name, namespace: ns, labels: nameLabel },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: rbac.name },
        subjects: [saSubject],
      }
      for ns in roleNamespaces
    } else {},

    metricsService: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: name + '-metrics', namespace: p.namespace, labels: podLabels },
      spec: {
        selector: podLabels,
        ports: [{ name: 'https', port: 8443, targetPort: 'metrics', appProtocol: 'https' }],
      },
    },

    webhookService: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: name + '-webhook', namespace: p.namespace, labels: podLabels },
      spec: {
        selector: podLabels,
        ports: [{ name: 'webhook', port: 443, targetPort: 'webhook' }],
      },
    },

    deployment: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: name, namespace: p.namespace, labels: podLabels },
      spec: {
        replicas: p.replicas,
        selector: { matchLabels: podLabels },
        template: {
          metadata: { labels: podLabels },
          spec: {
            serviceAccountName: name,
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [{
                  weight: 100,
                  podAffinityTerm: {
                    topologyKey: 'kubernetes.io/hostname',
                    labelSelector: { matchLabels: podLabels },
                  },
                }],
              },
            },
            securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [{
              name: 'operator',
              image: p.image + ':' + p.version,
              args: [
                'run',
                '--leader-elect',
                '--metrics-bind-address=:8443',
                '--health-probe-bind-address=:8081',
              ] + (if namespaced then ['--namespaces=' + std.join(',', p.namespaces)] else []),
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                // The Go runtime collects harder near the memory limit instead of being OOM-killed at it.
                { name: 'GOMEMLIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } },
                // The backup agent and the nginx-reloader come from the operator's own image.
                { name: 'NGINX_OPERATOR_IMAGE', value: p.image + ':' + p.version },
              ],
              ports: [
                { name: 'metrics', containerPort: 8443 },
                { name: 'health', containerPort: 8081 },
                { name: 'webhook', containerPort: 9443 },
              ],
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'health' },
                initialDelaySeconds: 15,
                periodSeconds: 20,
              },
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'health' },
                periodSeconds: 5,
              },
              resources: p.resources,
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            }],
            volumes: [{ name: 'tmp', emptyDir: {} }],
            terminationGracePeriodSeconds: 35,
          },
        },
      },
    },

    podDisruptionBudget: {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: name, namespace: p.namespace, labels: podLabels },
      spec: { minAvailable: 1, selector: { matchLabels: podLabels } },
    },

    // bundle.yaml's order (kustomize's legacy order: namespaces and CRDs
    // first, then RBAC, Services, workloads), so `kubectl create -f` never
    // creates an object before what it needs.
    all: [self.namespace] +
         [self.crds[crd.spec.names.plural] for crd in crdList] +
         [self.serviceAccount] +
         [self.roles[ns] for ns in std.objectFields(self.roles)] +
         [self.clusterRole, self.metricsReaderClusterRole] +
         [self.roleBindings[ns] for ns in std.objectFields(self.roleBindings)] +
         [self.clusterRoleBinding, self.metricsService, self.webhookService, self.deployment, self.podDisruptionBudget],
  },

  // A GatewayClass whose Gateways the operator serves. Cluster-scoped, one
  // per cluster: gateway() below uses its default name. Not "nginx", which
  // other implementations' installs take, and controllerName cannot change.
  gatewayClass(name='nginx-operator'):: {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: name },
    spec: {
      controllerName: gatewayController,
      description: 'Gateways served by nginx-operator, one NginxOperator each',
    },
  },

  // A Gateway and the HTTPRoutes attached to it, in one namespace. The
  // operator makes the Gateway the NginxOperator <name>-gateway, whose
  // Service <name>-gateway serves the listeners (Documentation/gateway-api.md).
  //
  //   local web = (import 'nginx-operator/main.libsonnet').gateway({
  //     name: 'web',
  //     namespace: 'team-a',
  //     routes: {
  //       www: { hostnames: ['www.team-a.example'], rules: [{ path: '/', service: 'www', port: 80 }] },
  //     },
  //   });
  //   web.all   // the Gateway, then the routes by name
  //
  // Listeners are Gateway API's own (name, port, protocol, hostname, tls,
  // allowedRoutes), written as its documentation shows them. A route rule
  // is shorter than Gateway API's: the paths it matches and one backend
  // Service; anything else (filters, header matches, weighted backends) is
  // added by extending httpRoutes.<name>.
  gateway(params):: {
    local p = {
      className: 'nginx-operator',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      routes: {},
    } + params,
    // Said here, by name, rather than by the apiserver about an object
    // with an empty field.
    local required(obj, field, what) =
      if std.objectHas(obj, field) then obj[field] else error what + ': ' + field + ' is required',
    local name = required(p, 'name', 'gateway'),
    local namespace = required(p, 'namespace', 'gateway ' + name),

    gateway: {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: name, namespace: namespace },
      spec: { gatewayClassName: p.className, listeners: p.listeners },
    },

    // Keyed by route name. A route's fields:
    //   hostnames  the hosts it serves (default: every host its listeners take)
    //   listener   the listener (sectionName) it attaches to (default: all)
    //   rules      [{path or paths, pathType (default PathPrefix), service, port}]
    httpRoutes: {
      [routeName]: {
        local r = p.routes[routeName],
        local what = 'gateway ' + name + ', route ' + routeName,
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: routeName, namespace: namespace },
        spec: {
          parentRefs: [{ name: name } + (if std.objectHas(r, 'listener') then { sectionName: r.listener } else {})],
          [if std.objectHas(r, 'hostnames') then 'hostnames']: r.hostnames,
          rules: [
            local rule = r.rules[i];
            local ruleWhat = what + ', rule ' + i;
            local paths =
              if std.objectHas(rule, 'paths') then rule.paths
              else if std.objectHas(rule, 'path') then [rule.path]
              else error ruleWhat + ': path or paths is required';
            {
              matches: [
                { path: { type: std.get(rule, 'pathType', 'PathPrefix'), value: path } }
                for path in paths
              ],
              backendRefs: [{ name: required(rule, 'service', ruleWhat), port: required(rule, 'port', ruleWhat) }],
            }
            for i in std.range(0, std.length(required(r, 'rules', what)) - 1)
          ],
        },
      }
      for routeName in std.objectFields(p.routes)
    },

    // The Gateway first: a route names it as its parent.
    all: [self.gateway] + [self.httpRoutes[n] for n in std.objectFields(self.httpRoutes)],
  },
}
