package httpwire

import "errors"

// ErrBodyTimeout is the error a request body's Read returns when the client sent no byte of it
// for the server's body idle timeout (internal/server wraps every request body in that watch).
// The front ends answer it as their protocols do: S3 with 400 RequestTimeout, Swift with 408.
// The connection is closed after the answer, since what remains of the body is still unread.
var ErrBodyTimeout = errors.New("request body: no data within the idle timeout")
