{{/* Labels on every object's metadata: the kustomize base's part-of, and Helm's own. */}}
{{- define "vscheduler.labels" -}}
app.kubernetes.io/part-of: vscheduler
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* The labels of the scheduler's Deployment, pods and Service. */}}
{{- define "vscheduler.componentLabels" -}}
app.kubernetes.io/name: vscheduler
app.kubernetes.io/component: scheduler
{{- end }}
