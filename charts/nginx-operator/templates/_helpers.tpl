{{/*
Helpers of the chart's templates. The objects themselves are generated from
config/ by "make bundle" (hack/bundle); this file, NOTES.txt, tests/ and
values.schema.json are written by hand.
*/}}

{{/*
Labels Helm adds to every object, next to the objects' own
app.kubernetes.io/name and component (which the selectors use and which must
not change between releases).
*/}}
{{- define "nginx-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
{{- end }}

{{/*
The operator's image: repository, then the digest when one is given, else
the tag, which defaults to the chart's appVersion.
*/}}
{{- define "nginx-operator.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/*
The flags of "operator run" that values set, after those of config/'s
Deployment. Combinations the operator would refuse fail the install here,
with the value's name.
*/}}
{{- define "nginx-operator.args" -}}
{{- if and .Values.watchNamespaces .Values.denyNamespaces }}
{{- fail "watchNamespaces and denyNamespaces cannot be combined: watch some namespaces, or all but some" }}
{{- end }}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicaCount > 1 needs leaderElection.enabled: two replicas would both reconcile" }}
{{- end }}
{{- with .Values.watchNamespaces }}
- --namespaces={{ join "," . }}
{{- end }}
{{- with .Values.denyNamespaces }}
- --deny-namespaces={{ join "," . }}
{{- end }}
{{- if not .Values.webhook.enabled }}
- --conversion-webhook=false
{{- end }}
{{- with .Values.images.nginx }}
- --nginx-image={{ . }}
{{- end }}
{{- with .Values.images.exporter }}
- --exporter-image={{ . }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}
