// The nginx-operator Grafana dashboard, built as plain JSON (schemaVersion
// 39 panels) from the mixin's _config. Every panel and query uses the
// templated datasource, so the dashboard works with any Prometheus.
// reconcileDurationP99 is the mixin's query of the 99th percentile reconcile
// duration by controller, shared with its recording rule; routeLabels are
// the labels the route panels sum by.
function(cfg, reconcileDurationP99, routeLabels)
  local datasource = { type: 'prometheus', uid: '${datasource}' };
  local ns = 'namespace=~"$namespace"';

  local target(expr, legend) = {
    datasource: datasource,
    expr: expr,
    legendFormat: legend,
    refId: 'A',
  };

  local timeseries(title, unit, targets, description='') = {
    type: 'timeseries',
    title: title,
    description: description,
    datasource: datasource,
    fieldConfig: { defaults: { unit: unit }, overrides: [] },
    options: { legend: { displayMode: 'table', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } },
    // refIds must be unique within a panel.
    targets: [targets[i] { refId: std.char(std.codepoint('A') + i) } for i in std.range(0, std.length(targets) - 1)],
  };

  local stat(title, unit, targets, description='') = timeseries(title, unit, targets, description) {
    type: 'stat',
    options: { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', graphMode: 'none' },
  };

  local table(title, unit, targets, description='') = timeseries(title, unit, [t { format: 'table', instant: true } for t in targets], description) {
    type: 'table',
    options: { showHeader: true },
    transformations: [{ id: 'organize', options: { excludeByName: { Time: true, __name__: true } } }],
  };

  local row(title) = { type: 'row', title: title, collapsed: false, panels: [] };

  // layout lays out {row, panels} groups: a full-width row, then its panels
  // side by side with equal widths, and gives every panel a unique id.
  local layout(groups) =
    local flat = std.flattenArrays([
      local g = groups[gi];
      local w = std.floor(24 / std.length(g.panels));
      [g.row { gridPos: { x: 0, y: gi * 9, w: 24, h: 1 } }] +
      [g.panels[pi] { gridPos: { x: pi * w, y: gi * 9 + 1, w: w, h: 8 } } for pi in std.range(0, std.length(g.panels) - 1)]
      for gi in std.range(0, std.length(groups) - 1)
    ]);
    [flat[i] { id: i + 1 } for i in std.range(0, std.length(flat) - 1)];

  local op = cfg.nginxOperatorSelector;
  local ngx = cfg.nginxSelector;
  local rl = cfg.nginxReloaderSelector;
  local r = cfg.rateInterval;

  {
    uid: cfg.grafanaDashboardUid,
    title: 'nginx-operator',
    tags: cfg.grafanaDashboardTags,
    timezone: 'utc',
    editable: true,
    refresh: cfg.grafanaDashboardRefresh,
    schemaVersion: 39,
    time: { from: 'now-6h', to: 'now' },
    templating: {
      list: [
        {
          name: 'datasource',
          label: 'Data source',
          type: 'datasource',
          query: 'prometheus',
          current: {},
          hide: 0,
        },
        {
          name: 'namespace',
          label: 'Namespace',
          type: 'query',
          datasource: datasource,
          query: { query: 'label_values(nginx_operator_instance_available{%s}, namespace)' % op, refId: 'namespace' },
          definition: 'label_values(nginx_operator_instance_available{%s}, namespace)' % op,
          includeAll: true,
          multi: true,
          allValue: '.*',
          current: { text: 'All', value: '$__all' },
          refresh: 2,
          sort: 1,
          hide: 0,
        },
      ],
    },
    annotations: { list: [] },
    panels: layout([
      {
        row: row('Operator'),
        panels: [
          stat('Leader', 'short', [
            target('max(leader_election_master_status{%s,name="%s"})' % [op, cfg.leaderElectionName], 'leader'),
          ], '1 when a replica holds the leader election lease.'),
          stat('Operator targets up', 'short', [target('sum(up{%s})' % op, 'up')]),
          // Shows the series' legend (the version), not the count.
          stat('Version', 'short', [
            target('count by (version, revision) (nginx_operator_build_info{%s})' % op, '{{version}} ({{revision}})'),
          ]) + { options+: { textMode: 'name' } },
          timeseries('Work queue depth', 'short', [
            target('sum by (name) (workqueue_depth{%s})' % op, '{{name}}'),
          ]),
        ],
      },
      {
        row: row('Reconciliation'),
        panels: [
          timeseries('Reconciles by controller and result', 'ops', [
            target('sum by (controller, result) (rate(controller_runtime_reconcile_total{%s}[%s]))' % [op, r], '{{controller}} {{result}}'),
          ], "Counted by controller-runtime. requeue_after: done for now, looks again later (e.g. waiting for a referenced object)."),
          timeseries('Reconcile errors by reason', 'ops', [
            target('sum by (controller, reason) (rate(nginx_operator_reconcile_errors_total{%s}[%s]))' % [op, r], '{{controller}} {{reason}}'),
            target('sum by (controller) (rate(controller_runtime_terminal_reconcile_errors_total{%s}[%s]))' % [op, r], '{{controller}} terminal (not retried)'),
          ], 'Terminal errors (a spec the operator refuses) are not retried until the object changes.'),
          timeseries('Reconcile duration p99', 's', [
            target(reconcileDurationP99, '{{controller}}'),
          ]),
        ],
      },
      {
        row: row('Instances and monitors'),
        panels: [
          timeseries('NginxOperator instances unavailable', 'short', [
            target('sum by (namespace) (1 - nginx_operator_instance_available{%s,%s})' % [op, ns], '{{namespace}}'),
          ]),
          table('NginxOperator availability', 'short', [
            target('nginx_operator_instance_available{%s,%s}' % [op, ns], ''),
          ], '1 when the Available condition is True.'),
          table('NginxMonitor targets', 'short', [
            target('nginx_operator_monitor_targets{%s,%s}' % [op, ns], ''),
          ], 'Instances each NginxMonitor selects; 0 means it matches nothing.'),
        ],
      },
      {
        row: row('Backups'),
        panels: [
          timeseries('Time since last successful backup', 's', [
            target('time() - nginx_operator_backup_last_success_timestamp_seconds{%s,%s}' % [op, ns], '{{namespace}}/{{name}}'),
          ]),
          timeseries('Last backup size', 'bytes', [
            target('nginx_operator_backup_last_size_bytes{%s,%s}' % [op, ns], '{{namespace}}/{{name}}'),
          ]),
          timeseries('Last backup duration', 's', [
            target('nginx_operator_backup_last_duration_seconds{%s,%s}' % [op, ns], '{{namespace}}/{{name}}'),
          ]),
          timeseries('Backup failures', 'short', [
            target('sum by (namespace, name) (increase(nginx_operator_backup_failures_total{%s,%s}[1h]))' % [op, ns], '{{namespace}}/{{name}}'),
            target('nginx_operator_backup_last_run_failed{%s,%s} == 1' % [op, ns], '{{namespace}}/{{name}} last run failed'),
          ], 'Failures in the last hour, and backups whose last run failed.'),
        ],
      },
      {
        row: row('nginx'),
        panels: [
          timeseries('nginx up', 'short', [
            target('sum by (namespace, instance) (nginx_up{%s,%s})' % [ngx, ns], '{{namespace}}/{{instance}}'),
          ], 'Pods whose exporter reaches nginx, per instance.'),
          timeseries('Active connections', 'short', [
            target('sum by (namespace, instance) (nginx_connections_active{%s,%s})' % [ngx, ns], '{{namespace}}/{{instance}}'),
          ]),
          timeseries('Requests', 'reqps', [
            target('sum by (namespace, instance) (rate(nginx_http_requests_total{%s,%s}[%s]))' % [ngx, ns, r], '{{namespace}}/{{instance}}'),
          ]),
        ],
      },
      // The reloaders' series, taken per pod first (max by pod): a pod that
      // two NginxMonitors scrape is two series of one pod, and counts once.
      {
        row: row('nginx configuration reloads'),
        panels: [
          timeseries('Configuration reloads', 'short', [
            target('sum by (namespace, instance) (max by (namespace, instance, pod) (increase(reloader_reloads_total{%s,%s}[%s])))' % [rl, ns, r], '{{namespace}}/{{instance}} reloaded'),
            target('sum by (namespace, instance) (max by (namespace, instance, pod) (increase(reloader_reloads_failed_total{%s,%s}[%s])))' % [rl, ns, r], '{{namespace}}/{{instance}} refused'),
          ], 'New configurations each instance\'s pods loaded, and those nginx refused (the previous one kept serving), per %s.' % r),
          timeseries('Pods refusing their configuration', 'short', [
            target('sum by (namespace, instance) (1 - max by (namespace, instance, pod) (reloader_last_reload_successful{%s,%s}))' % [rl, ns], '{{namespace}}/{{instance}}'),
          ], "Pods whose last reload failed: they serve an older configuration. See the instance's Degraded condition (ConfigRejected)."),
          table('Loaded configurations', 'short', [
            target('count by (namespace, instance, hash) (max by (namespace, instance, pod, hash) (reloader_config_info{%s,%s}))' % [rl, ns], ''),
          ], "Pods per configuration hash nginx runs. The current configuration's is the NginxOperator's status.configHash; pods on another hash have yet to load it, or refused it."),
        ],
      },
      // Rate, errors and duration of each route: the reloaders' request
      // metrics, per pod first as above.
      {
        row: row('Routes'),
        panels: [
          timeseries('Requests by route', 'reqps', [
            target('sum by (%s) (max by (%s, pod, service, status) (rate(nginx_route_requests_total{%s,%s}[%s])))' % [routeLabels, routeLabels, rl, ns, r], '{{namespace}}/{{instance}} {{server}} {{route}}'),
          ], 'Requests per second nginx answered, by route: a location\'s name (a Gateway\'s routes are httproute/<namespace>/<name>) or its path.'),
          timeseries('5xx ratio by route', 'percentunit', [
            target('sum by (%s) (max by (%s, pod, service, status) (rate(nginx_route_requests_total{%s,%s,status="5xx"}[%s]))) / sum by (%s) (max by (%s, pod, service, status) (rate(nginx_route_requests_total{%s,%s}[%s])))' % [routeLabels, routeLabels, rl, ns, r, routeLabels, routeLabels, rl, ns, r], '{{namespace}}/{{instance}} {{server}} {{route}}'),
          ], 'The share of each route\'s requests answered with a 5xx status, by nginx or by its Service.'),
          timeseries('Request duration p99 by route', 's', [
            target('histogram_quantile(0.99, sum by (%s, le) (max by (%s, pod, service, le) (rate(nginx_route_request_duration_seconds_bucket{%s,%s}[%s]))))' % [routeLabels, routeLabels, rl, ns, r], '{{namespace}}/{{instance}} {{server}} {{route}}'),
          ], "From the request's first byte to the response's last, as nginx measures it."),
          timeseries('Service duration p99', 's', [
            target('histogram_quantile(0.99, sum by (namespace, instance, service, le) (max by (namespace, instance, pod, server, route, service, le) (rate(nginx_route_upstream_duration_seconds_bucket{%s,%s}[%s]))))' % [rl, ns, r], '{{namespace}}/{{instance}} {{service}}'),
          ], 'How long the proxied Services took to answer, every endpoint tried included.'),
          timeseries('Request lines dropped', 'short', [
            target('sum by (namespace, instance) (max by (namespace, instance, pod) (rate(reloader_request_lines_dropped_total{%s,%s}[%s])))' % [rl, ns, r], '{{namespace}}/{{instance}}'),
          ], 'Lines per second the kernel dropped before a reloader read them: requests served but missing from the panels beside.'),
        ],
      },
    ]),
  }
