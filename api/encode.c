/*
 * encode.c - response JSON helpers (see encode.h).
 */
#include "api/encode.h"

void imp_put(json_t *obj, const char *key, json_t *val, int *ok) {
    if (!val || json_object_set_new(obj, key, val) != 0) *ok = 0;
}

void imp_put_real(json_t *obj, const char *key, double x, int *ok) {
    imp_put(obj, key, json_real(x), ok);
}

json_t *imp_enc_vec(imp_vec3 v, int dim) {
    json_t *a = json_array();
    if (!a) return NULL;
    double c[3] = {v.x, v.y, v.z};
    for (int i = 0; i < dim; ++i) {
        if (json_array_append_new(a, json_real(c[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *imp_enc_id(const imp_body *b) {
    if (!b->id) return json_integer((json_int_t)b->index);
    if (json_is_string(b->id)) return json_deep_copy(b->id);
    return json_integer((json_int_t)json_number_value(b->id));
}
