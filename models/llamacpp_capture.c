/* The eval callback liedar gives llama.cpp, in C.
 *
 * Why C: ggml's scheduler asks the callback about *every* node of the compute graph
 * (hundreds per decoded token) before it computes it. A Python callback pays a ctypes
 * round trip for each ask, measured at 5-10% of a 135M model's decode time, which would
 * make the inline monitor's budget (<= 5%) impossible and slow even plain generation.
 * Here the ask is a string compare; Python is called only for the tensors it wants
 * (one per token while monitoring), through `on_data`.
 *
 * `name_offset` is offsetof(ggml_tensor, name) from the Python mirror of the struct in
 * models/llamacpp.py, so this file needs no ggml header; the Python side verifies every
 * captured tensor's layout before reading it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define LIEDAR_MAX_WANT 256
#define LIEDAR_NAME_LEN 64

typedef bool (*liedar_on_data)(void *tensor);

struct liedar_capture {
    size_t name_offset;
    int n_want;
    char want[LIEDAR_MAX_WANT][LIEDAR_NAME_LEN];
    liedar_on_data on_data; /* returns false to end the graph computation after this node */
};

bool liedar_eval_callback(void *tensor, bool ask, void *user_data)
{
    const struct liedar_capture *capture = user_data;
    const char *name = (const char *)tensor + capture->name_offset;
    for (int i = 0; i < capture->n_want; ++i) {
        if (strncmp(name, capture->want[i], LIEDAR_NAME_LEN) == 0) {
            return ask ? true : capture->on_data(tensor);
        }
    }
    return !ask; /* not wanted: no need to stop the graph for it */
}
