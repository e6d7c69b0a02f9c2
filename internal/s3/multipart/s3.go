package multipart

import "github.com/cairn-store/cairn/internal/s3/objects"

type Handler struct{ *objects.Handler }
