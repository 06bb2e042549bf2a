/** Port: the automation's screenshots (PNG), addressed by keys from lib/object-keys.ts. */
interface PresignedImage {
  url: string;
  expiresAt: string;
}

export interface ScreenshotStorage {
  put(key: string, png: Uint8Array): Promise<void>;
  /** A URL that lets its holder GET this image, shown inline, for `expiresInSeconds`. */
  presignGet(key: string, expiresInSeconds: number): Promise<PresignedImage>;
}
