{{- define "draguard.labels" -}}
app.kubernetes.io/name: draguard
app.kubernetes.io/component: webhook
{{- end -}}
