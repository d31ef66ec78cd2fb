/**
 * The DeleteOptions.propagationPolicy pulumi-kubernetes sends when it deletes an object,
 * ported from pulumi/pulumi-kubernetes (provider v4.25.0, the module the Go proxy serves as
 * github.com/pulumi/pulumi-kubernetes/provider/v4@v4.0.0-20260115033456-f47bc2d6f199):
 * provider/pkg/metadata/annotations.go names the annotation (`AnnotationDeletionPropagation`),
 * provider/pkg/metadata/overrides.go (`DeletionPropagation`) reads it case-insensitively,
 * anything else meaning Foreground, and provider/pkg/await/await.go (`Deletion`) passes it
 * to the API server's delete call.
 */
export function deletePropagationPolicy(annotations: Readonly<Record<string, string>> | undefined): "Foreground" | "Background" | "Orphan" {
  switch ((annotations?.["pulumi.com/deletionPropagationPolicy"] ?? "").toLowerCase()) {
    case "orphan":
      return "Orphan";
    case "background":
      return "Background";
    default:
      return "Foreground";
  }
}
