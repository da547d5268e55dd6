#include "vio_backend.h"

/*
 * Everything the frontend sends is taken as it comes (the tx queue's buffers go back at once)
 * and everything this side sends waits for an rx buffer: each tx packet may queue a reply
 * (the connection's flags, its echoes, or a reset in `control`) that vio_vsock_next writes
 * into the oldest held rx buffer. So nothing here waits, and a frontend that stops posting rx
 * buffers only stops its own replies.
 */

/* Byte loops: the slots may be Device memory to the backend (MMU off). */
static void put_bytes(uint8_t *dst, const uint8_t *src, uint32_t n)
{
	while (n--)
		*dst++ = *src++;
}

static uint64_t get_le(const uint8_t *p, uint32_t bytes)
{
	uint64_t v = 0;

	for (uint32_t i = bytes; i--;)
		v = v << 8 | p[i];
	return v;
}

static void put_le_at(uint8_t *p, uint64_t v, uint32_t bytes)
{
	for (uint32_t i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

struct pkt {
	uint64_t src_cid, dst_cid;
	uint32_t src_port, dst_port, len;
	uint16_t type, op;
	uint32_t flags, buf_alloc, fwd_cnt;
};

static void get_hdr(const uint8_t *p, struct pkt *k)
{
	k->src_cid = get_le(p + 0, 8);
	k->dst_cid = get_le(p + 8, 8);
	k->src_port = (uint32_t)get_le(p + 16, 4);
	k->dst_port = (uint32_t)get_le(p + 20, 4);
	k->len = (uint32_t)get_le(p + 24, 4);
	k->type = (uint16_t)get_le(p + 28, 2);
	k->op = (uint16_t)get_le(p + 30, 2);
	k->flags = (uint32_t)get_le(p + 32, 4);
	k->buf_alloc = (uint32_t)get_le(p + 36, 4);
	k->fwd_cnt = (uint32_t)get_le(p + 40, 4);
}

const char *vio_vsock_start(struct vio_backend *b)
{
	struct vio_vsock *v = &b->vsock;
	uint64_t cid = get_le(b->shm + VIO_CONFIG, 8);

	/* 0, 1 and 2 are the hypervisor's, the loopback's and the host's; -1U is "any". */
	if (cid <= VSOCK_CID_HOST || cid >= 0xffffffffu)
		return "no valid guest_cid in the config space (the hypervisor writes it)";
	vio_vsock_reset(b);
	v->guest_cid = cid;
	return 0;
}

void vio_vsock_reset(struct vio_backend *b)
{
	struct vio_vsock *v = &b->vsock;

	v->rx_first = v->rx_count = 0;
	v->control_first = v->control_count = 0;
	for (uint32_t i = 0; i < VIO_VSOCK_CONNS; i++)
		v->conn[i].used = false;
}

/* A reset to send for a packet that names no connection (never for a reset). */
static void reply_rst(struct vio_vsock *v, const struct pkt *k)
{
	if (k->op == VSOCK_OP_RST)
		return;
	if (v->control_count == VIO_VSOCK_CONTROL) {
		v->dropped++;
		return;
	}
	struct vio_vsock_control *c = &v->control[(v->control_first + v->control_count++) %
						 VIO_VSOCK_CONTROL];
	c->src_port = k->dst_port;
	c->dst_port = k->src_port;
}

static struct vio_vsock_conn *find(struct vio_vsock *v, const struct pkt *k)
{
	if (k->dst_port != VIO_VSOCK_ECHO_PORT)
		return 0;
	for (uint32_t i = 0; i < VIO_VSOCK_CONNS; i++)
		if (v->conn[i].used && v->conn[i].peer_port == k->src_port)
			return &v->conn[i];
	return 0;
}

/* The connection ends: its reset goes out through the control queue. */
static void drop(struct vio_vsock *v, struct vio_vsock_conn *c, const struct pkt *k)
{
	c->used = false;
	reply_rst(v, k);
}

static void accept(struct vio_vsock *v, const struct pkt *k)
{
	struct vio_vsock_conn *c = find(v, k);

	if (k->dst_port != VIO_VSOCK_ECHO_PORT) {
		reply_rst(v, k);
		return;
	}
	for (uint32_t i = 0; !c && i < VIO_VSOCK_CONNS; i++)
		if (!v->conn[i].used)
			c = &v->conn[i];
	if (!c) {
		reply_rst(v, k);
		return;
	}
	/* A request for a pair already connected starts it again: the frontend forgot it. */
	*c = (struct vio_vsock_conn){ .used = true, .peer_port = k->src_port };
	c->peer_buf_alloc = k->buf_alloc;
	c->peer_fwd_cnt = k->fwd_cnt;
	v->connections++;
}

/* A whole line's piece for the owner: "vsock PORT: TEXT", printable bytes only. */
static void print_line(struct vio_backend *b, const uint8_t *p, uint32_t n)
{
	static const char prefix[] = "vsock ";
	char text[sizeof(prefix) + 12 + VIO_VSOCK_LINE_MAX + 1];
	uint32_t at = 0, port = VIO_VSOCK_ECHO_PORT;
	char digits[10];
	uint32_t nd = 0;

	for (uint32_t i = 0; prefix[i]; i++)
		text[at++] = prefix[i];
	do {
		digits[nd++] = (char)('0' + port % 10);
		port /= 10;
	} while (port);
	while (nd)
		text[at++] = digits[--nd];
	text[at++] = ':';
	text[at++] = ' ';
	for (uint32_t i = 0; i < n; i++) {
		if (p[i] == '\r')
			continue;
		text[at++] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
	}
	text[at] = '\0';
	if (b->line_out)
		b->line_out(b, text);
}

/* Echo what whole lines (or pieces of VIO_VSOCK_LINE_MAX) have arrived, while out has room. */
static void consume(struct vio_backend *b, struct vio_vsock_conn *c)
{
	static const uint8_t echo[] = "echo: ";
	const uint32_t prefix = sizeof(echo) - 1;

	for (;;) {
		uint32_t end = 0;

		while (end < c->in_len && end < VIO_VSOCK_LINE_MAX && c->in[end] != '\n')
			end++;
		bool newline = end < c->in_len && c->in[end] == '\n';

		if (!newline && end < VIO_VSOCK_LINE_MAX)
			break;  /* the rest of the line is still to come */
		if (prefix + end + 1 > VIO_VSOCK_OUT_SIZE - c->out_len)
			break;  /* the frontend has not taken the echoes before: it gets room first */
		put_bytes(c->out + c->out_len, echo, prefix);
		put_bytes(c->out + c->out_len + prefix, c->in, end);
		c->out[c->out_len + prefix + end] = '\n';
		c->out_len += prefix + end + 1;
		print_line(b, c->in, end);
		uint32_t taken = end + (newline ? 1u : 0u);

		c->in_len -= taken;
		for (uint32_t i = 0; i < c->in_len; i++)
			c->in[i] = c->in[taken + i];
		c->fwd_cnt += taken;
	}
	/* The frontend may be waiting for room: tell it once less than half is left in its view. */
	if (c->fwd_cnt != c->fwd_sent &&
	    VIO_VSOCK_BUF_ALLOC - (c->rx_cnt - c->fwd_sent) < VIO_VSOCK_BUF_ALLOC / 2)
		c->credit_due = true;
}

static void tx_packet(struct vio_backend *b, const uint8_t *slot, uint32_t readable)
{
	struct vio_vsock *v = &b->vsock;
	struct pkt k;

	if (readable < VSOCK_HDR_SIZE) {
		v->bad_packets++;       /* names no ports: nothing to answer */
		return;
	}
	get_hdr(slot, &k);
	if (k.src_cid != v->guest_cid || k.dst_cid != VSOCK_CID_HOST) {
		/* Not the frontend's, or not to this side: an answer would go nowhere it should. */
		v->bad_packets++;
		return;
	}
	struct vio_vsock_conn *c = find(v, &k);

	if (k.len != readable - VSOCK_HDR_SIZE || k.type != VSOCK_TYPE_STREAM) {
		v->bad_packets++;
		if (c)
			drop(v, c, &k);
		else
			reply_rst(v, &k);
		return;
	}
	if (k.op == VSOCK_OP_REQUEST) {
		accept(v, &k);
		return;
	}
	if (!c) {
		/* 5.10.6.4: a packet for no connection is answered with a reset. */
		if (k.op < VSOCK_OP_REQUEST || k.op > VSOCK_OP_CREDIT_REQUEST)
			v->bad_packets++;
		reply_rst(v, &k);
		return;
	}
	c->peer_buf_alloc = k.buf_alloc;
	c->peer_fwd_cnt = k.fwd_cnt;
	switch (k.op) {
	case VSOCK_OP_RW:
		if (k.len > VIO_VSOCK_BUF_ALLOC - c->in_len || c->closing) {
			/* More than the credit it was given, or after its shutdown. */
			v->bad_packets++;
			drop(v, c, &k);
			return;
		}
		put_bytes(c->in + c->in_len, slot + VSOCK_HDR_SIZE, k.len);
		c->in_len += k.len;
		c->rx_cnt += k.len;
		consume(b, c);
		return;
	case VSOCK_OP_CREDIT_UPDATE:
		return;
	case VSOCK_OP_CREDIT_REQUEST:
		c->credit_due = true;
		return;
	case VSOCK_OP_SHUTDOWN:
		/* Echoes it will not read are dropped; the rest go out before the reset. */
		if (k.flags & VSOCK_SHUTDOWN_RCV || !(k.flags & VSOCK_SHUTDOWN_SEND))
			c->out_len = 0;
		c->closing = true;
		return;
	case VSOCK_OP_RST:
		c->used = false;
		return;
	default:
		/* RESPONSE to a request this side never made, INVALID, or no operation at all. */
		v->bad_packets++;
		drop(v, c, &k);
		return;
	}
}

bool vio_vsock_request(struct vio_backend *b, const struct vio_request *req, uint8_t *slot,
		       uint32_t *written)
{
	struct vio_vsock *v = &b->vsock;

	*written = 0;
	if (req->queue == VIO_VSOCK_TX) {
		tx_packet(b, slot, req->readable);
		return true;
	}
	if (req->queue == VIO_VSOCK_EVENT)
		return false;
	if (req->writable < VSOCK_HDR_SIZE || v->rx_count == VIO_VSOCK_QUEUE_SIZE) {
		/* Room for no header (or a head posted twice): back at once, empty. */
		v->bad_packets++;
		return true;
	}
	uint32_t at = (v->rx_first + v->rx_count++) % VIO_VSOCK_QUEUE_SIZE;

	v->rx_head[at] = req->head;
	v->rx_room[at] = req->writable;
	return false;
}

static uint32_t peer_credit(const struct vio_vsock_conn *c)
{
	uint32_t in_flight = c->tx_cnt - c->peer_fwd_cnt;

	return in_flight >= c->peer_buf_alloc ? 0 : c->peer_buf_alloc - in_flight;
}

bool vio_vsock_next(struct vio_backend *b, uint16_t *head, uint32_t *written)
{
	struct vio_vsock *v = &b->vsock;
	uint32_t src_port = VIO_VSOCK_ECHO_PORT, dst_port = 0, op = VSOCK_OP_INVALID;
	uint32_t room, len = 0, fwd_cnt = 0;
	struct vio_vsock_conn *c = 0;

	if (v->rx_count == 0)
		return false;
	room = v->rx_room[v->rx_first] - VSOCK_HDR_SIZE;
	if (v->control_count) {
		const struct vio_vsock_control *r = &v->control[v->control_first];

		src_port = r->src_port;
		dst_port = r->dst_port;
		op = VSOCK_OP_RST;
		v->control_first = (v->control_first + 1) % VIO_VSOCK_CONTROL;
		v->control_count--;
	}
	for (uint32_t i = 0; op == VSOCK_OP_INVALID && i < VIO_VSOCK_CONNS; i++) {
		c = &v->conn[i];
		if (!c->used)
			continue;
		if (!c->responded) {
			op = VSOCK_OP_RESPONSE;
			c->responded = true;
		} else if (c->out_len && peer_credit(c) && room) {
			op = VSOCK_OP_RW;
			len = c->out_len;
			if (len > peer_credit(c))
				len = peer_credit(c);
			if (len > room)
				len = room;
		} else if (c->credit_due) {
			op = VSOCK_OP_CREDIT_UPDATE;
		} else if (c->closing && !c->out_len) {
			op = VSOCK_OP_RST;
			c->used = false;
		} else {
			continue;
		}
		dst_port = c->peer_port;
		fwd_cnt = c->fwd_cnt;
		/* Every packet carries the credit: nothing more is owed. */
		c->fwd_sent = c->fwd_cnt;
		c->credit_due = false;
	}
	if (op == VSOCK_OP_INVALID)
		return false;
	if (op == VSOCK_OP_RST)
		v->resets++;

	*head = v->rx_head[v->rx_first];
	v->rx_first = (v->rx_first + 1) % VIO_VSOCK_QUEUE_SIZE;
	v->rx_count--;
	uint8_t *slot = b->shm + VIO_DATA +
			((uint64_t)VIO_VSOCK_RX * b->queue_size + *head) * b->slot_size;
	uint8_t hdr[VSOCK_HDR_SIZE];

	put_le_at(hdr + 0, VSOCK_CID_HOST, 8);
	put_le_at(hdr + 8, v->guest_cid, 8);
	put_le_at(hdr + 16, src_port, 4);
	put_le_at(hdr + 20, dst_port, 4);
	put_le_at(hdr + 24, len, 4);
	put_le_at(hdr + 28, VSOCK_TYPE_STREAM, 2);
	put_le_at(hdr + 30, op, 2);
	put_le_at(hdr + 32, 0, 4);
	put_le_at(hdr + 36, VIO_VSOCK_BUF_ALLOC, 4);
	put_le_at(hdr + 40, fwd_cnt, 4);
	put_bytes(slot, hdr, VSOCK_HDR_SIZE);
	if (len) {
		put_bytes(slot + VSOCK_HDR_SIZE, c->out, len);
		c->out_len -= len;
		for (uint32_t i = 0; i < c->out_len; i++)
			c->out[i] = c->out[len + i];
		c->tx_cnt += len;
	}
	*written = VSOCK_HDR_SIZE + len;
	return true;
}
