/* runtime/cuda/kernels.cu - the built-in models' kernels; see kernels.h. */
#include "runtime/cuda/kernels.h"

#include <cuda_runtime.h>

#define TILE 16

/* Block (TILE x TILE threads) computes the TILE x TILE outputs of samples
 * blockIdx.y*TILE + ty and units blockIdx.x*TILE + tx. Per step of TILE
 * inputs, thread (ty, tx) loads x[sample ty][k0 + tx] and the weight of unit
 * ty at k0 + tx into shared memory (zero outside the matrices), then every
 * thread adds its TILE products. */
__global__ void fc_kernel(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ bias,
			  float *__restrict__ y, int n, int in, int out, int relu)
{
	__shared__ float xs[TILE][TILE + 1];
	__shared__ float ws[TILE][TILE + 1];
	int tx = threadIdx.x, ty = threadIdx.y;
	int row = blockIdx.y * TILE + ty;  /* the sample this thread computes */
	int col = blockIdx.x * TILE + tx;  /* the unit this thread computes */
	int wrow = blockIdx.x * TILE + ty; /* the unit whose weights this thread loads */
	float acc = 0.0f;
	for (int k0 = 0; k0 < in; k0 += TILE) {
		int k = k0 + tx;
		xs[ty][tx] = row < n && k < in ? x[(size_t)row * in + k] : 0.0f;
		ws[ty][tx] = wrow < out && k < in ? w[(size_t)wrow * in + k] : 0.0f;
		__syncthreads();
		for (int kk = 0; kk < TILE; kk++)
			acc += xs[ty][kk] * ws[tx][kk];
		__syncthreads();
	}
	if (row < n && col < out) {
		float v = acc + bias[col];
		y[(size_t)row * out + col] = relu && v < 0.0f ? 0.0f : v;
	}
}

/* One thread per output element (grid-stride): the max over its 2x2 window of
 * ReLU(bias + 3x3 convolution). */
__global__ void conv_pool_kernel(const float *__restrict__ x, const float *__restrict__ w,
				 const float *__restrict__ bias, float *__restrict__ y, int n, int cin, int h, int wd,
				 int cout)
{
	int oh = h / 2, ow = wd / 2;
	long long total = (long long)n * cout * oh * ow;
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
	     i += (long long)gridDim.x * blockDim.x) {
		int px = (int)(i % ow);
		long long t = i / ow;
		int py = (int)(t % oh);
		t /= oh;
		int co = (int)(t % cout);
		long long s = t / cout;
		const float *xs = x + (size_t)s * cin * h * wd;
		const float *wc = w + (size_t)co * cin * 9;
		float best = 0.0f; /* ReLU, then max: the max of 0 and the four sums */
		for (int d = 0; d < 4; d++) {
			int cy = 2 * py + d / 2, cx = 2 * px + d % 2;
			float acc = bias[co];
			for (int ci = 0; ci < cin; ci++)
				for (int k = 0; k < 9; k++) {
					int iy = cy + k / 3 - 1, ix = cx + k % 3 - 1;
					if (iy >= 0 && iy < h && ix >= 0 && ix < wd)
						acc += xs[((size_t)ci * h + iy) * wd + ix] * wc[ci * 9 + k];
				}
			best = fmaxf(best, acc);
		}
		y[i] = best;
	}
}

extern "C" int sym__cuda_fc(const float *x, const float *w, const float *bias, float *y, int n, int in, int out,
			    int relu, void *stream)
{
	dim3 block(TILE, TILE), grid((unsigned)((out + TILE - 1) / TILE), (unsigned)((n + TILE - 1) / TILE));
	fc_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(x, w, bias, y, n, in, out, relu);
	return (int)cudaGetLastError();
}

extern "C" int sym__cuda_conv_pool(const float *x, const float *w, const float *bias, float *y, int n, int cin, int h,
				   int wd, int cout, void *stream)
{
	long long total = (long long)n * cout * (h / 2) * (wd / 2);
	long long blocks = (total + 255) / 256;
	if (blocks > (1 << 20))
		blocks = 1 << 20; /* the kernel strides over the rest */
	if (blocks < 1)
		blocks = 1;
	conv_pool_kernel<<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>(x, w, bias, y, n, cin, h, wd, cout);
	return (int)cudaGetLastError();
}
