/* runtime/cuda/kernel_body.h - what one GPU thread of a built-in computes, in C that nvcc and
 * gcc both compile.
 *
 * The kernels (kernels.cu) call these per thread. tests/test_cudamodels.c
 * calls them on the CPU for every thread index and checks the result against
 * the reference (sym_cuda_builtin_ref). That way the kernels' index arithmetic
 * is tested on machines without a GPU.
 *
 * Each thread computes one output unit (fully connected) or one output pixel
 * (convolution) for every sample of the batch, one sample after the other.
 * The set of threads is fixed by the layer, not by the batch, so every sample
 * adds the same work to the same threads. The latency of a batch of b is
 * therefore alpha * b + beta: beta is the launches and copies, alpha a
 * sample's work. These are test models whose profiles come out of real runs,
 * not fast ones. A real model shows the same straight line once its batches
 * fill the GPU.
 */
#ifndef SYM_CUDA_KERNEL_BODY_H
#define SYM_CUDA_KERNEL_BODY_H

#include <stddef.h>

#ifdef __CUDACC__
#define SYM_HD static inline __host__ __device__
#else
#define SYM_HD static inline
#endif

/* Unit u of a fully connected layer, for samples 0..n-1:
 * y[s][u] = bias[u] + sum_k wt[k][u] x[s][k], then ReLU if relu. wt is the
 * layer's weights transposed, [in][out] (sym_cuda_builtin_device_params), so
 * the threads of a warp read consecutive floats of one row. */
SYM_HD void sym_fc_unit(const float *x, const float *wt, const float *bias, float *y, int n, int in, int out,
			int relu, int u)
{
	for (int s = 0; s < n; s++) {
		const float *xs = x + (size_t)s * (size_t)in;
		float acc = bias[u];
		for (int k = 0; k < in; k++)
			acc += wt[(size_t)k * (size_t)out + (size_t)u] * xs[k];
		y[(size_t)s * (size_t)out + (size_t)u] = relu && acc < 0.0f ? 0.0f : acc;
	}
}

/* Output element i (of cout * (h/2) * (wd/2), that is [co][py][px]) of a 3x3
 * convolution (zero padding) + ReLU + 2x2 max-pool of stride 2, for samples
 * 0..n-1 of x ([n][cin][h][wd]) into y ([n][cout][h/2][wd/2]). w is
 * [cout][cin][3][3]. */
SYM_HD void sym_conv_pool_elem(const float *x, const float *w, const float *bias, float *y, int n, int cin, int h,
			       int wd, int cout, long long i)
{
	int oh = h / 2, ow = wd / 2;
	int px = (int)(i % ow);
	int py = (int)(i / ow % oh);
	int co = (int)(i / ((long long)ow * oh));
	size_t in_per = (size_t)cin * (size_t)h * (size_t)wd, out_per = (size_t)cout * (size_t)oh * (size_t)ow;
	const float *wc = w + (size_t)co * (size_t)cin * 9;
	for (int s = 0; s < n; s++) {
		const float *xs = x + (size_t)s * in_per;
		float best = 0.0f; /* ReLU, then max: the max of 0 and the four sums */
		for (int d = 0; d < 4; d++) {
			int cy = 2 * py + d / 2, cx = 2 * px + d % 2;
			float acc = bias[co];
			for (int ci = 0; ci < cin; ci++)
				for (int k = 0; k < 9; k++) {
					int iy = cy + k / 3 - 1, ix = cx + k % 3 - 1;
					if (iy >= 0 && iy < h && ix >= 0 && ix < wd)
						acc += xs[((size_t)ci * (size_t)h + (size_t)iy) * (size_t)wd + (size_t)ix] *
						       wc[ci * 9 + k];
				}
			best = acc > best ? acc : best;
		}
		y[(size_t)s * out_per + (size_t)i] = best;
	}
}

#endif
