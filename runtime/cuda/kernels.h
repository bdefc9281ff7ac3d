/* runtime/cuda/kernels.h - the built-in models' CUDA kernels (kernels.cu), callable from C.
 *
 * Each function enqueues one kernel on `stream` (a cudaStream_t) and returns
 * what cudaGetLastError() says after the launch, as an int (0: cudaSuccess).
 * Pointers are device memory; layouts are those of runtime/cuda/cuda_models.h,
 * except that a fully connected layer's weights are transposed ([in][out],
 * sym_cuda_builtin_device_params). One thread computes one output for every
 * sample of the batch in turn (kernel_body.h), so latency grows linearly
 * with the batch.
 */
#ifndef SYM_CUDA_KERNELS_H
#define SYM_CUDA_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* y[s][j] = bias[j] + sum_k wt[k][j] x[s][k] for n samples, in -> out units;
 * then ReLU if relu. One thread per unit. */
int sym__cuda_fc(const float *x, const float *wt, const float *bias, float *y, int n, int in, int out, int relu,
		 void *stream);

/* For n samples of [cin][h][w]: 3x3 convolution (zero padding) to cout
 * channels, ReLU, 2x2 max-pool of stride 2: y is [n][cout][h/2][w/2]. One
 * thread per output element of a sample. */
int sym__cuda_conv_pool(const float *x, const float *w, const float *bias, float *y, int n, int cin, int h, int wd,
			int cout, void *stream);

#ifdef __cplusplus
}
#endif

#endif
