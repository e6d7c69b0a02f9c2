package s3core

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

// ACLs: canned (x-amz-acl) and grants (x-amz-grant-* headers or an s3xml.AccessControlPolicy
// document), on buckets (kept in the container's metadata, access.MetaACL) and objects (in the
// object's SysMeta, access.ObjectMetaACL). Cairn's canonical user ID is the account name, and
// the bucket's account owns every object in it.

// grantHeaders are the x-amz-grant-* headers and their permissions.
var grantHeaders = []struct {
	header string
	perm   access.Permission
}{
	{"X-Amz-Grant-Full-Control", access.FullControl},
	{"X-Amz-Grant-Read", access.Read},
	{"X-Amz-Grant-Write", access.Write},
	{"X-Amz-Grant-Read-Acp", access.ReadACP},
	{"X-Amz-Grant-Write-Acp", access.WriteACP},
}

// ACLFromHeaders reads the ACL a request sets by header: x-amz-acl or x-amz-grant-*, not both.
// set is false when it sets none.
func (h *Front) ACLFromHeaders(r *http.Request, forObject bool) (acl access.ACL, set bool, err error) {
	canned := r.Header.Get("X-Amz-Acl")
	var grants []access.Grant
	for _, g := range grantHeaders {
		for _, v := range r.Header.Values(g.header) {
			gs, err := parseGrantHeader(g.perm, v)
			if err != nil {
				return access.ACL{}, false, err
			}
			grants = append(grants, gs...)
		}
	}
	switch {
	case canned != "" && len(grants) > 0:
		return access.ACL{}, false, errCannedAndGrants
	case canned != "":
		a, err := access.CannedACL(canned, forObject)
		if err != nil {
			return access.ACL{}, false, aclError(err)
		}
		return a, true, nil
	case len(grants) > 0:
		a := access.ACL{Grants: grants}
		if err := h.checkGrantees(r, a); err != nil {
			return access.ACL{}, false, err
		}
		return a, true, nil
	}
	return access.ACL{}, false, nil
}

// parseGrantHeader reads one x-amz-grant-* value: a comma-separated list of id="...",
// uri="..." or emailAddress="..." (quotes optional).
func parseGrantHeader(p access.Permission, v string) ([]access.Grant, error) {
	var out []access.Grant
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, val, ok := strings.Cut(item, "=")
		val = strings.Trim(strings.TrimSpace(val), `"`)
		if !ok || val == "" {
			return nil, ErrInvalidArgument.WithMessage("Invalid grant %q: want id=\"...\", uri=\"...\" or emailAddress=\"...\".", item)
		}
		var g access.Grant
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "id":
			g = access.Grant{Grantee: access.Grantee{ID: val}, Permission: p}
		case "uri":
			g = access.Grant{Grantee: access.Grantee{URI: val}, Permission: p}
		case "emailaddress":
			return nil, errUnresolvableByEmail
		default:
			return nil, ErrInvalidArgument.WithMessage("Invalid grant %q: want id=\"...\", uri=\"...\" or emailAddress=\"...\".", item)
		}
		if err := (access.ACL{Grants: []access.Grant{g}}).Validate(); err != nil {
			return nil, aclError(err)
		}
		out = append(out, g)
	}
	return out, nil
}

// aclError is the S3 error for an ACL that access refused.
func aclError(err error) error {
	switch {
	case errors.Is(err, access.ErrUnsupported):
		return ErrNotImplemented.WithMessage("%s", err.Error())
	case errors.Is(err, access.ErrInvalidACL):
		return ErrInvalidArgument.WithMessage("%s", err.Error())
	}
	return err
}

// checkGrantees refuses grants to accounts that do not exist (S3's "Invalid id"), when the
// front end can ask the tenant store.
func (h *Front) checkGrantees(r *http.Request, a access.ACL) error {
	if h.Cfg.Quotas == nil {
		return nil
	}
	for _, g := range a.Grants {
		if g.Grantee.ID == "" {
			continue
		}
		_, err := h.Cfg.Quotas.AccountQuota(r.Context(), g.Grantee.ID)
		if errors.Is(err, access.ErrNoAccount) {
			return ErrInvalidArgument.WithMessage("Invalid id: no account %q", g.Grantee.ID)
		}
		if err != nil {
			return fmt.Errorf("grantee %q: %w", g.Grantee.ID, err)
		}
	}
	return nil
}

// aclInput is an s3xml.AccessControlPolicy document a client sends.
type aclInput struct {
	XMLName xml.Name `xml:"AccessControlPolicy"`
	Owner   *struct {
		ID string `xml:"ID"`
	} `xml:"Owner"`
	List *struct {
		Grants []struct {
			Grantee *struct {
				Attrs []xml.Attr `xml:",any,attr"`
				ID    string     `xml:"ID"`
				URI   string     `xml:"URI"`
				Email string     `xml:"EmailAddress"`
			} `xml:"Grantee"`
			Permission string `xml:"Permission"`
		} `xml:"Grant"`
	} `xml:"AccessControlList"`
}

// parseACLDocument reads an s3xml.AccessControlPolicy. The owner it names must be the bucket's
// owner; the owner's own grants are dropped (the owner always has full control).
func parseACLDocument(body []byte, bucketOwner string) (access.ACL, error) {
	var in aclInput
	if err := DecodeXML(body, &in); err != nil {
		return access.ACL{}, fmt.Errorf("%w: %v", errMalformedACL, err)
	}
	if in.Owner == nil || in.Owner.ID == "" || in.List == nil {
		return access.ACL{}, fmt.Errorf("no Owner or AccessControlList: %w", errMalformedACL)
	}
	if in.Owner.ID != bucketOwner {
		return access.ACL{}, ErrInvalidArgument.WithMessage("Invalid id: the Owner ID %q is not the bucket owner's.", in.Owner.ID)
	}
	var acl access.ACL
	for _, g := range in.List.Grants {
		if g.Grantee == nil {
			return access.ACL{}, fmt.Errorf("a Grant without a Grantee: %w", errMalformedACL)
		}
		p, err := access.ParsePermission(g.Permission)
		if err != nil {
			return access.ACL{}, fmt.Errorf("%w: %v", errMalformedACL, err)
		}
		typ := ""
		for _, a := range g.Grantee.Attrs {
			if a.Name.Local == "type" {
				typ = a.Value
			}
		}
		var ge access.Grantee
		switch typ {
		case "CanonicalUser":
			ge.ID = strings.TrimSpace(g.Grantee.ID)
		case "Group":
			ge.URI = strings.TrimSpace(g.Grantee.URI)
		case "AmazonCustomerByEmail":
			return access.ACL{}, errUnresolvableByEmail
		default:
			return access.ACL{}, fmt.Errorf("grantee type %q (CanonicalUser or Group): %w", typ, errMalformedACL)
		}
		if ge.ID == bucketOwner {
			continue
		}
		acl.Grants = append(acl.Grants, access.Grant{Grantee: ge, Permission: p})
	}
	if err := acl.Validate(); err != nil {
		return access.ACL{}, aclError(err)
	}
	return acl, nil
}

// ACLDocument is the answer of GET ?acl: the grants, then the owner with full control. S3
// does not document an order; the owner's grant last is the order Ceph's s3-tests compare a
// canned ACL's grants in (clients look grants up, they do not count on places).
func ACLDocument(ownerAccount string, acl access.ACL) s3xml.AccessControlPolicy {
	doc := s3xml.CannedACL(ownerAccount)
	owner := doc.Grants
	doc.Grants = nil
	for _, g := range acl.Grants {
		ge := s3xml.Grantee{XMLNSXSI: s3xml.XSINamespace}
		if g.Grantee.ID != "" {
			ge.XSIType, ge.ID, ge.DisplayName = "CanonicalUser", g.Grantee.ID, g.Grantee.ID
		} else {
			ge.XSIType, ge.URI = "Group", g.Grantee.URI
		}
		doc.Grants = append(doc.Grants, s3xml.Grant{Grantee: ge, Permission: string(g.Permission)})
	}
	doc.Grants = append(doc.Grants, owner...)
	return doc
}

// ReadACLRequest reads the ACL of a PUT ?acl: headers or a document, not both.
func (h *Front) ReadACLRequest(r *http.Request, rq *Request, forObject bool) (access.ACL, error) {
	acl, set, err := h.ACLFromHeaders(r, forObject)
	if err != nil {
		return access.ACL{}, err
	}
	body, err := h.ReadSmallBody(r, rq, MaxACLBodyBytes, false)
	if err != nil {
		return access.ACL{}, err
	}
	hasBody := len(bytes.TrimSpace(body)) > 0
	switch {
	case set && hasBody:
		return access.ACL{}, errUnexpectedContent
	case set:
		return acl, nil
	case !hasBody:
		return access.ACL{}, errMissingRequestBody.WithMessage("A PUT ?acl needs x-amz-acl, x-amz-grant-* headers or an AccessControlPolicy document.")
	}
	acl, err = parseACLDocument(body, rq.Account)
	if err != nil {
		return access.ACL{}, err
	}
	if err := h.checkGrantees(r, acl); err != nil {
		return access.ACL{}, err
	}
	return acl, nil
}

// SetBucketMeta writes access state into the bucket's container and forgets the cached state.
func (h *Front) SetBucketMeta(ctx context.Context, rq *Request, m map[string]string) error {
	_, err := h.Proxy.PostContainer(ctx, rq.Account, rq.Bucket, m)
	h.states.forget(rq.Account, rq.Bucket)
	if err != nil {
		return BucketError(fmt.Errorf("update bucket %q: %w", rq.Bucket, err))
	}
	return nil
}
