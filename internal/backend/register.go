package backend

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/cairn-store/cairn/internal/binenc"
	"github.com/cairn-store/cairn/internal/casreg"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// The registers' messages (internal/casreg) between proxies and Cairn's nodes: the verb
// REGISTER on a partition's path (/device/partition), whose body is the register's key
// (length-prefixed: a key may hold any byte) and the message, casreg's encoding; the answer is
// the reply in the same encoding. Swift's servers do not know the verb: a proxy over them
// decides nothing through registers (nodeclient.ErrNoRegisters).
const (
	methodRegister = "REGISTER"
	registerType   = "application/x-cairn-register"
	// maxRegisterBody bounds a REGISTER body: a key and a message with a register's data.
	maxRegisterBody = nodeclient.MaxRegisterKey + casreg.MaxDataSize + 1024
)

func encodeRegisterRequest(key string, m casreg.Message) []byte {
	return m.AppendTo(binenc.AppendString(nil, key))
}

func decodeRegisterRequest(b []byte) (string, casreg.Message, error) {
	d := binenc.Decoder{B: b}
	n := d.Uvarint()
	if d.Err != nil || n > nodeclient.MaxRegisterKey {
		return "", casreg.Message{}, fmt.Errorf("%w: register key of %d bytes", ErrBadRequest, n)
	}
	key := string(d.Bytes(n))
	if d.Err != nil {
		return "", casreg.Message{}, fmt.Errorf("%w: register key: %v", ErrBadRequest, d.Err)
	}
	m, err := casreg.DecodeMessage(d.B)
	if err != nil {
		return "", casreg.Message{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	return key, m, nil
}

// register answers a REGISTER request.
func (h *Handler) register(w http.ResponseWriter, r *http.Request) error {
	regs, ok := h.node.(nodeclient.Registers)
	if !ok {
		return nodeclient.ErrNoRegisters
	}
	dev, part, err := parsePartitionPath(r.URL.EscapedPath())
	if err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRegisterBody+1))
	if err != nil {
		return fmt.Errorf("%w: reading the message: %v", ErrBadRequest, err)
	}
	if len(body) > maxRegisterBody {
		return fmt.Errorf("%w: a register message over %d bytes", ErrBadRequest, maxRegisterBody)
	}
	key, m, err := decodeRegisterRequest(body)
	if err != nil {
		return err
	}
	reply, err := regs.Register(r.Context(), dev, part, key, m)
	if err != nil {
		return err
	}
	out := reply.AppendTo(nil)
	w.Header().Set("Content-Type", registerType)
	w.Header().Set("Content-Length", fmt.Sprint(len(out)))
	_, err = w.Write(out)
	return err
}

var _ nodeclient.Registers = (*Client)(nil)

// Register sends one message to the acceptor of a register on the node.
func (c *Client) Register(ctx context.Context, device string, part uint32, key string, m casreg.Message) (casreg.Reply, error) {
	if len(key) > nodeclient.MaxRegisterKey {
		return casreg.Reply{}, fmt.Errorf("register key of %d bytes: %w", len(key), meta.ErrInvalidName)
	}
	b := encodeRegisterRequest(key, m)
	resp, err := c.do(ctx, call{method: methodRegister, raw: partitionPath(device, part), body: bytes.NewReader(b), length: int64(len(b))})
	if err != nil {
		return casreg.Reply{}, err
	}
	if resp.Header.Get(hdrNode) == "" {
		drain(resp)
		return casreg.Reply{}, fmt.Errorf("backend: REGISTER: status %d from a node that is not Cairn's: %w", resp.StatusCode, nodeclient.ErrNoRegisters)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		// A Cairn node from before registers reads the verb as a malformed request (this
		// client sends none): the proxy decides the old way until the node is upgraded.
		err := failed(resp, "REGISTER")
		return casreg.Reply{}, fmt.Errorf("%w: %w", err, nodeclient.ErrNoRegisters)
	default:
		return casreg.Reply{}, failed(resp, "REGISTER")
	}
	defer drain(resp)
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxRegisterBody+1))
	if err != nil {
		return casreg.Reply{}, fmt.Errorf("backend: REGISTER answer: %v: %w", err, meta.ErrUnavailable)
	}
	reply, err := casreg.DecodeReply(out)
	if err != nil {
		return casreg.Reply{}, fmt.Errorf("backend: REGISTER answer: %v: %w", err, meta.ErrUnavailable)
	}
	return reply, nil
}
