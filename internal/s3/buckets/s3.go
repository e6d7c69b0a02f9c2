package buckets

import "github.com/cairn-store/cairn/internal/s3/s3core"

type Handler struct{ *s3core.Front }
