// Monitoring mixin for nginx-operator: alerts, recording rules and a Grafana
// dashboard for the operator and the nginx instances it manages.
//
// Use it the monitoring-mixins way: import it, override `_config` with `+::`,
// and take `prometheusAlerts`, `prometheusRules` and `grafanaDashboards`.
//
//   local mixin = (import 'nginx-operator/mixin/mixin.libsonnet') + {
//     _config+:: { nginxOperatorSelector: 'job="my-operator"' },
//   };
{
  _config+:: {
    // Selects the operator's own metrics (the scrape job of its metrics
    // endpoint). Its series carry `namespace`/`name` labels of the custom
    // resources, so that job must keep the operator's labels (honorLabels).
    nginxOperatorSelector: 'job="nginx-operator"',
    // Selects the nginx-prometheus-exporter sidecars; NginxMonitor scrape
    // configurations name their jobs nginxmonitor/<namespace>/<name>. The
    // regex stops at that name, so an up-based expression on it never
    // counts the reloader jobs below.
    nginxSelector: 'job=~"nginxmonitor/[^/]+/[^/]+"',
    // Selects the nginx-reloaders of the same pods, which NginxMonitors
    // scrape in jobs of their own: nginxmonitor/<namespace>/<name>/reloader.
    nginxReloaderSelector: 'job=~"nginxmonitor/[^/]+/[^/]+/reloader"',
    // The Lease name the operator elects its leader with (--leader-election-id).
    leaderElectionName: 'nginx-operator.nginx.operator.dev',

    // Ratio of failed reconciliations per controller above which the
    // operator is considered broken rather than retrying a transient error.
    reconcileErrorRatioThreshold: 0.1,
    reconcileErrorsFor: '15m',
    operatorDownFor: '10m',
    noLeaderFor: '5m',
    instanceUnavailableFor: '10m',
    nginxDownFor: '5m',
    // A reload failed when reloader_last_reload_successful was 0 throughout
    // this window (max_over_time, so a scrape missed or a failure fixed
    // within the window does not count), and alerts after configReloadFailedFor.
    configReloadFailedWindow: '5m',
    configReloadFailedFor: '10m',
    backupFailedFor: '5m',
    // A scheduled backup is too old when its last success is older than this
    // many schedule intervals: 2 means a whole scheduled run was missed.
    backupMaxAgeFactor: 2,
    backupTooOldFor: '10m',
    monitorMatchesNothingFor: '15m',
    // Per-route alerts (nginx_route_*, the reloaders' request metrics):
    // a route alerts when more than this share of its requests get 5xx, or
    // its 99th percentile exceeds routeLatencyThresholdSeconds, for the
    // durations below, and only while it serves at least
    // routeMinRequestRate requests per second, so that one failure of a
    // route hardly used does not page anyone.
    routeErrorRatioThreshold: 0.05,
    routeErrorsFor: '10m',
    routeLatencyThresholdSeconds: 1,
    routeLatencyFor: '15m',
    routeMinRequestRate: 0.1,
    // A pod's request metrics are short when the kernel drops more than
    // this share of its request lines (reloader_request_lines_dropped_total)
    // for requestLinesDroppedFor.
    requestLinesDroppedRatioThreshold: 0.01,
    requestLinesDroppedFor: '15m',

    // Window of rate() in rules and dashboard panels.
    rateInterval: '5m',

    runbookURLPattern: 'https://github.com/nginx-operator/nginx-operator/blob/main/Documentation/monitoring.md#%s',

    grafanaDashboardUid: 'nginx-operator',
    grafanaDashboardTags: ['nginx-operator'],
    grafanaDashboardRefresh: '30s',
  },

  local cfg = self._config,

  // alert fills the fields every alert must have, so none can lack its
  // severity, annotations or runbook link.
  local alert(name, expr, forDuration, severity, summary, description) = {
    alert: name,
    expr: expr,
    'for': forDuration,
    labels: { severity: severity },
    annotations: {
      summary: summary,
      description: description,
      runbook_url: cfg.runbookURLPattern % std.asciiLower(name),
    },
  },

  // controller-runtime's reconcile time histogram has classic buckets and
  // native-histogram buckets. A Prometheus that ingests native histograms
  // keeps only the native one unless told to keep the classic buckets too;
  // the `or` reads whichever exists, the classic buckets first.
  local reconcileDurationP99 = |||
    histogram_quantile(0.99, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{%(nginxOperatorSelector)s}[%(rateInterval)s])))
      or
    histogram_quantile(0.99, sum by (controller) (rate(controller_runtime_reconcile_time_seconds{%(nginxOperatorSelector)s}[%(rateInterval)s])))
  ||| % cfg,

  // The routes' request rate, 5xx ratio and 99th percentile of duration,
  // by instance, server and route: the reloaders' request metrics, taken
  // per pod first (max by pod), as a pod two NginxMonitors scrape is two
  // series of one pod.
  local routeLabels = 'namespace, instance, server, route',
  local routeRequestRate = |||
    sum by (%(routeLabels)s) (max by (%(routeLabels)s, pod, service, status) (rate(nginx_route_requests_total{%(nginxReloaderSelector)s}[%(rateInterval)s])))
  ||| % (cfg + { routeLabels: routeLabels }),
  local routeErrorRatio = |||
    sum by (%(routeLabels)s) (max by (%(routeLabels)s, pod, service, status) (rate(nginx_route_requests_total{%(nginxReloaderSelector)s,status="5xx"}[%(rateInterval)s])))
      /
    %(routeRequestRate)s
  ||| % (cfg + { routeLabels: routeLabels, routeRequestRate: routeRequestRate }),
  local routeLatencyP99 = |||
    histogram_quantile(0.99, sum by (%(routeLabels)s, le) (max by (%(routeLabels)s, pod, service, le) (rate(nginx_route_request_duration_seconds_bucket{%(nginxReloaderSelector)s}[%(rateInterval)s]))))
  ||| % (cfg + { routeLabels: routeLabels }),

  prometheusAlerts+:: {
    groups+: [
      {
        name: 'nginx-operator',
        rules: [
          alert(
            'NginxOperatorReconcileErrors',
            // controller-runtime counts every reconciliation of the
            // operator's controllers by result (success, error, requeue,
            // requeue_after); terminal errors are result="error" too.
            |||
              sum by (controller) (rate(controller_runtime_reconcile_total{%(nginxOperatorSelector)s,result="error"}[%(rateInterval)s]))
                /
              sum by (controller) (rate(controller_runtime_reconcile_total{%(nginxOperatorSelector)s}[%(rateInterval)s]))
                > %(reconcileErrorRatioThreshold)g
            ||| % cfg,
            cfg.reconcileErrorsFor,
            'warning',
            'The {{ $labels.controller }} controller of nginx-operator fails many reconciliations.',
            '{{ $value | humanizePercentage }} of the reconciliations of the {{ $labels.controller }} controller fail.',
          ),
          alert(
            'NginxOperatorDown',
            'absent(up{%(nginxOperatorSelector)s} == 1)' % cfg,
            cfg.operatorDownFor,
            'critical',
            'nginx-operator is down.',
            'No nginx-operator metrics endpoint selected by %(nginxOperatorSelector)s has been up for %(operatorDownFor)s: nothing reconciles NginxOperator, NginxMonitor and NginxBackup objects.' % cfg,
          ),
          alert(
            'NginxOperatorNoLeader',
            |||
              (
                max(leader_election_master_status{%(nginxOperatorSelector)s,name="%(leaderElectionName)s"}) == 0
                  or
                absent(leader_election_master_status{%(nginxOperatorSelector)s,name="%(leaderElectionName)s"})
              )
              and on ()
              (max(up{%(nginxOperatorSelector)s}) == 1)
            ||| % cfg,
            cfg.noLeaderFor,
            'critical',
            'nginx-operator has no leader.',
            'nginx-operator is running but no replica holds the %(leaderElectionName)s lease, so no controller reconciles.' % cfg,
          ),
        ],
      },
      {
        name: 'nginx-instances',
        rules: [
          alert(
            'NginxInstanceUnavailable',
            'nginx_operator_instance_available{%(nginxOperatorSelector)s} == 0' % cfg,
            cfg.instanceUnavailableFor,
            'critical',
            'NginxOperator {{ $labels.namespace }}/{{ $labels.name }} is not available.',
            'The Available condition of NginxOperator {{ $labels.namespace }}/{{ $labels.name }} has been False for %(instanceUnavailableFor)s.' % cfg,
          ),
          alert(
            'NginxDown',
            'nginx_up{%(nginxSelector)s} == 0' % cfg,
            cfg.nginxDownFor,
            'warning',
            'nginx in pod {{ $labels.namespace }}/{{ $labels.pod }} is down.',
            'The nginx exporter of NginxOperator {{ $labels.namespace }}/{{ $labels.instance }} cannot reach nginx in pod {{ $labels.pod }}.',
          ),
          alert(
            'NginxConfigReloadFailed',
            'max_over_time(reloader_last_reload_successful{%(nginxReloaderSelector)s}[%(configReloadFailedWindow)s]) == 0' % cfg,
            cfg.configReloadFailedFor,
            'warning',
            'nginx in pod {{ $labels.namespace }}/{{ $labels.pod }} refuses its new configuration.',
            'The last reload of nginx in pod {{ $labels.pod }} of NginxOperator {{ $labels.namespace }}/{{ $labels.instance }} failed and none has succeeded since, for %(configReloadFailedFor)s: nginx refused the new configuration, or a certificate it reads, and the previous configuration keeps serving. The instance\'s Degraded condition (reason ConfigRejected) quotes nginx\'s error.' % cfg,
          ),
          alert(
            'NginxMonitorMatchesNothing',
            'nginx_operator_monitor_targets{%(nginxOperatorSelector)s} == 0' % cfg,
            cfg.monitorMatchesNothingFor,
            'warning',
            'NginxMonitor {{ $labels.namespace }}/{{ $labels.name }} has no nginx to scrape.',
            'NginxMonitor {{ $labels.namespace }}/{{ $labels.name }} has had no scrape target for %(monitorMatchesNothingFor)s: it selects no NginxOperator, or none of those it selects has metrics enabled and running replicas.' % cfg,
          ),
        ],
      },
      {
        name: 'nginx-routes',
        rules: [
          alert(
            'NginxRouteErrors',
            |||
              (%(routeErrorRatio)s) > %(routeErrorRatioThreshold)g
              and
              %(routeRequestRate)s >= %(routeMinRequestRate)g
            ||| % (cfg + { routeErrorRatio: routeErrorRatio, routeRequestRate: routeRequestRate }),
            cfg.routeErrorsFor,
            'warning',
            'Route {{ $labels.route }} of NginxOperator {{ $labels.namespace }}/{{ $labels.instance }} answers many requests with 5xx.',
            '{{ $value | humanizePercentage }} of the requests to route {{ $labels.route }} (server {{ $labels.server }}) of NginxOperator {{ $labels.namespace }}/{{ $labels.instance }} got a 5xx status for %(routeErrorsFor)s.' % cfg,
          ),
          alert(
            'NginxRouteSlow',
            |||
              (%(routeLatencyP99)s) > %(routeLatencyThresholdSeconds)g
              and
              %(routeRequestRate)s >= %(routeMinRequestRate)g
            ||| % (cfg + { routeLatencyP99: routeLatencyP99, routeRequestRate: routeRequestRate }),
            cfg.routeLatencyFor,
            'warning',
            'Route {{ $labels.route }} of NginxOperator {{ $labels.namespace }}/{{ $labels.instance }} is slow.',
            'The 99th percentile of the time nginx took to answer route {{ $labels.route }} (server {{ $labels.server }}) of NginxOperator {{ $labels.namespace }}/{{ $labels.instance }} has been {{ $value | humanizeDuration }} for %(routeLatencyFor)s, over %(routeLatencyThresholdSeconds)gs.' % cfg,
          ),
          alert(
            'NginxRequestLinesDropped',
            // Per pod: the lines the kernel dropped against those the
            // reloader counted, both from the same reloader.
            |||
              sum by (namespace, instance, pod) (rate(reloader_request_lines_dropped_total{%(nginxReloaderSelector)s}[%(rateInterval)s]))
                /
              (
                sum by (namespace, instance, pod) (rate(reloader_request_lines_dropped_total{%(nginxReloaderSelector)s}[%(rateInterval)s]))
                  +
                sum by (namespace, instance, pod) (rate(nginx_route_requests_total{%(nginxReloaderSelector)s}[%(rateInterval)s]))
              )
                > %(requestLinesDroppedRatioThreshold)g
            ||| % cfg,
            cfg.requestLinesDroppedFor,
            'info',
            'The request metrics of pod {{ $labels.namespace }}/{{ $labels.pod }} miss requests.',
            'The kernel dropped {{ $value | humanizePercentage }} of the request lines nginx sent to the reloader of pod {{ $labels.pod }} of NginxOperator {{ $labels.namespace }}/{{ $labels.instance }} for %(requestLinesDroppedFor)s: the reloader does not keep up, and nginx_route_requests_total is short by as much. Requests are served.' % cfg,
          ),
        ],
      },
      {
        name: 'nginx-backups',
        rules: [
          alert(
            'NginxBackupFailed',
            'nginx_operator_backup_last_run_failed{%(nginxOperatorSelector)s} == 1' % cfg,
            cfg.backupFailedFor,
            'warning',
            'NginxBackup {{ $labels.namespace }}/{{ $labels.name }} failed.',
            'The last run of NginxBackup {{ $labels.namespace }}/{{ $labels.name }} failed.',
          ),
          alert(
            'NginxBackupTooOld',
            // Both gauges come from the same operator target, so they match
            // one-to-one on all their labels; one-shot backups have no
            // schedule interval and so never match.
            |||
              time() - nginx_operator_backup_last_success_timestamp_seconds{%(nginxOperatorSelector)s}
                >
              %(backupMaxAgeFactor)s * nginx_operator_backup_schedule_interval_seconds{%(nginxOperatorSelector)s}
            ||| % cfg,
            cfg.backupTooOldFor,
            'warning',
            'NginxBackup {{ $labels.namespace }}/{{ $labels.name }} has no recent successful backup.',
            'The last successful run of scheduled NginxBackup {{ $labels.namespace }}/{{ $labels.name }} is older than %(backupMaxAgeFactor)s schedule intervals: it last succeeded {{ $value | humanizeDuration }} ago.' % cfg,
          ),
        ],
      },
    ],
  },

  prometheusRules+:: {
    groups+: [
      {
        name: 'nginx-operator.rules',
        rules: [
          // The reconcile series come from controller-runtime; the
          // recorded names keep the nginx_operator_ part so they cannot
          // clash with another operator's rules on the same Prometheus.
          {
            record: 'controller_result:nginx_operator_reconciles:rate%(rateInterval)s' % cfg,
            expr: 'sum by (controller, result) (rate(controller_runtime_reconcile_total{%(nginxOperatorSelector)s}[%(rateInterval)s]))' % cfg,
          },
          {
            // controller-runtime creates every result series at 0 when a
            // controller starts, so a controller that never failed records
            // 0, not nothing.
            record: 'controller:nginx_operator_reconcile_errors:ratio_rate%(rateInterval)s' % cfg,
            expr: |||
              sum by (controller) (rate(controller_runtime_reconcile_total{%(nginxOperatorSelector)s,result="error"}[%(rateInterval)s]))
                /
              sum by (controller) (rate(controller_runtime_reconcile_total{%(nginxOperatorSelector)s}[%(rateInterval)s]))
            ||| % cfg,
          },
          {
            record: 'controller:nginx_operator_reconcile_duration_seconds:p99_rate%(rateInterval)s' % cfg,
            expr: reconcileDurationP99,
          },
          {
            record: 'namespace:nginx_operator_instances:count',
            expr: 'count by (namespace) (nginx_operator_instance_available{%(nginxOperatorSelector)s})' % cfg,
          },
          {
            // 1 - available counts unavailable instances and yields 0, not
            // nothing, for a namespace whose instances are all available.
            record: 'namespace:nginx_operator_instances_unavailable:sum',
            expr: 'sum by (namespace) (1 - nginx_operator_instance_available{%(nginxOperatorSelector)s})' % cfg,
          },
        ],
      },
      {
        name: 'nginx.rules',
        rules: [
          {
            record: 'namespace_instance:nginx_http_requests:rate%(rateInterval)s' % cfg,
            expr: 'sum by (namespace, instance) (rate(nginx_http_requests_total{%(nginxSelector)s}[%(rateInterval)s]))' % cfg,
          },
          {
            record: 'namespace_instance:nginx_up:ratio',
            expr: 'avg by (namespace, instance) (nginx_up{%(nginxSelector)s})' % cfg,
          },
        ],
      },
      {
        name: 'nginx-routes.rules',
        rules: [
          {
            record: 'namespace_instance_server_route:nginx_route_requests:rate%(rateInterval)s' % cfg,
            expr: routeRequestRate,
          },
          {
            record: 'namespace_instance_server_route:nginx_route_errors:ratio_rate%(rateInterval)s' % cfg,
            expr: routeErrorRatio,
          },
          {
            record: 'namespace_instance_server_route:nginx_route_request_duration_seconds:p99_rate%(rateInterval)s' % cfg,
            expr: routeLatencyP99,
          },
        ],
      },
    ],
  },

  grafanaDashboards+:: {
    'nginx-operator.json': (import 'dashboard.libsonnet')(cfg, reconcileDurationP99, routeLabels),
  },
}
