// A team's Gateway composed with the library: the GatewayClass of the
// operator, a Gateway in team-a with plain HTTP and HTTPS listeners, and
// HTTPRoutes to the Services of example/team-a.yaml (www, api). The operator
// serves the Gateway as the NginxOperator edge-gateway; its Service
// edge-gateway listens on 80 and 443 (Documentation/gateway-api.md).
//
// Render it with the jsonnet/ directory on the library path, after the
// operator, Gateway API's CRDs and example/team-a.yaml are installed:
//   go tool jsonnet -J jsonnet jsonnet/examples/team-gateway.jsonnet > gateway.json
//   kubectl apply -f gateway.json
local nginxOperator = import 'nginx-operator/main.libsonnet';

local edge = nginxOperator.gateway({
  name: 'edge',
  namespace: 'team-a',
  listeners: [
    { name: 'http', port: 80, protocol: 'HTTP' },
    {
      name: 'https',
      port: 443,
      protocol: 'HTTPS',
      hostname: '*.team-a.example',
      // The team's certificate (see example/team-a.yaml for creating it).
      tls: { certificateRefs: [{ name: 'gateway-tls' }] },
    },
  ],
  routes: {
    // Both listeners: the site over HTTP and HTTPS.
    www: {
      hostnames: ['www.team-a.example'],
      rules: [{ path: '/', service: 'www', port: 80 }],
    },
    // HTTPS only: the API and its versioned paths go to the api Service.
    api: {
      listener: 'https',
      hostnames: ['api.team-a.example'],
      rules: [{ paths: ['/api/', '/v2/'], service: 'api', port: 80 }],
    },
  },
}) + {
  // What the parameters do not say is added by extending the objects before
  // taking all: here the api route also tells the backend which team
  // called, a Gateway API filter on its only rule.
  httpRoutes+: {
    api+: {
      spec+: {
        rules: [
          rule { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Team', value: 'a' }] } }] }
          for rule in super.rules
        ],
      },
    },
  },
};

{
  apiVersion: 'v1',
  kind: 'List',
  items: [nginxOperator.gatewayClass()] + edge.all,
}
