/* The eval callback liedar gives llama.cpp, in C.
 *
 * Why C: ggml's scheduler asks the callback about *every* node of the compute graph
 * (hundreds per decoded token) before computing it, and hands over each node it asked
 * for. Through a Python callback each ask costs a ctypes round trip (5-10% of a 135M
 * model's decode time, measured), and each copy runs Python while ggml's worker threads
 * spin (~70 us per tensor, measured). Here the ask is a string compare and the copy a
 * checked memcpy into a buffer that Python allocated before the decode and reads after
 * it returns: no Python runs inside the graph computation at all.
 *
 * The ggml_tensor field offsets come from the Python mirror of the struct in
 * models/llamacpp.py, so this file needs no ggml header; ggml_nbytes and
 * ggml_backend_tensor_get are passed in as function pointers, so it links to nothing.
 * A tensor that is not float32, not `d_model` wide, not 2-D and contiguous, or would
 * overflow its buffer is not copied; its slot records an error code that Python turns into a message.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LIEDAR_MAX_WANT 256
#define LIEDAR_NAME_LEN 64

enum { LIEDAR_OK = 0, LIEDAR_BAD_LAYOUT = 1, LIEDAR_OVERFLOW = 2 };

typedef size_t (*liedar_nbytes_fn)(const void *tensor);
typedef void (*liedar_tensor_get_fn)(const void *tensor, void *data, size_t offset, size_t size);

struct liedar_slot {
    char name[LIEDAR_NAME_LEN];
    char *dest;       /* float32 rows, appended in the order ggml computes them */
    size_t capacity;  /* bytes */
    size_t used;      /* bytes */
    int error;        /* LIEDAR_OK, LIEDAR_BAD_LAYOUT or LIEDAR_OVERFLOW */
    int type;         /* what the offending tensor looked like, for the message */
    int64_t ne[4];
};

struct liedar_capture {
    size_t type_offset, ne_offset, nb_offset, name_offset;
    int64_t d_model;
    int stop_after_capture; /* end the graph once a wanted tensor is copied */
    int n_want;
    liedar_nbytes_fn nbytes;
    liedar_tensor_get_fn tensor_get;
    struct liedar_slot want[LIEDAR_MAX_WANT];
};

static bool copy_into(struct liedar_capture *capture, struct liedar_slot *slot, void *tensor)
{
    const char *base = (const char *)tensor;
    const int type = *(const int *)(base + capture->type_offset);
    const int64_t *ne = (const int64_t *)(base + capture->ne_offset);
    const size_t *nb = (const size_t *)(base + capture->nb_offset);
    const size_t size = capture->nbytes(tensor);
    slot->type = type;
    memcpy(slot->ne, ne, sizeof slot->ne);
    /* float32, d_model wide, 2-D and row-major contiguous (a view with other strides would
       have the same byte count but different contents) */
    if (type != 0 /* GGML_TYPE_F32 */ || ne[0] != capture->d_model || ne[2] != 1 || ne[3] != 1
            || nb[0] != sizeof(float) || nb[1] != (size_t)ne[0] * sizeof(float)
            || size != (size_t)(ne[0] * ne[1]) * sizeof(float)) {
        slot->error = LIEDAR_BAD_LAYOUT;
        return true;
    }
    if (slot->used + size > slot->capacity) {
        slot->error = LIEDAR_OVERFLOW;
        return true;
    }
    capture->tensor_get(tensor, slot->dest + slot->used, 0, size);
    slot->used += size;
    return !capture->stop_after_capture;
}

bool liedar_eval_callback(void *tensor, bool ask, void *user_data)
{
    struct liedar_capture *capture = user_data;
    const char *name = (const char *)tensor + capture->name_offset;
    for (int i = 0; i < capture->n_want; ++i) {
        struct liedar_slot *slot = &capture->want[i];
        if (strncmp(name, slot->name, LIEDAR_NAME_LEN) == 0) {
            return ask ? true : copy_into(capture, slot, tensor);
        }
    }
    return !ask; /* not wanted: no need to stop the graph for it */
}
